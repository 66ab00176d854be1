import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

@Suite struct TCXWriterTests {
    /// 2026-11-23T15:42:01.123Z.
    static let start: Int64 = 1_795_448_521_123

    /// 5 s connected, a drop of 4 s, 3 s connected; one sample without contact (0 bpm).
    static func activityWithADrop() -> TCXActivity {
        var points: [TCXActivity.Trackpoint] = []
        for second in 1...5 { points.append(.init(time: start + Int64(second) * 1000, bpm: 70 + second)) }
        points[2].bpm = 0
        for second in 10...12 { points.append(.init(time: start + Int64(second) * 1000, bpm: 80 + second)) }
        return TCXActivity(
            start: start, sport: "Running", trackpoints: points, totalSeconds: 8.25, averageBPM: 80,
            maximumBPM: 92, calories: 12, notes: "Polar H10 <7E102030> & \"friends\"")
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func structure() {
        let xml = TCXWriter.document(Self.activityWithADrop())
        #expect(xml.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
        #expect(xml.contains(#"<TrainingCenterDatabase xmlns="\#(TCXWriter.namespace)">"#))
        #expect(xml.contains(#"<Activity Sport="Running">"#))
        #expect(xml.contains("<Id>2026-11-23T15:42:01.123Z</Id>"))
        #expect(xml.contains(#"<Lap StartTime="2026-11-23T15:42:01.123Z">"#))
        #expect(xml.contains("<TotalTimeSeconds>8.25</TotalTimeSeconds>"))
        #expect(xml.contains("<DistanceMeters>0</DistanceMeters>"))
        #expect(xml.contains("<Calories>12</Calories>"))
        #expect(xml.contains("<AverageHeartRateBpm><Value>80</Value></AverageHeartRateBpm>"))
        #expect(xml.contains("<MaximumHeartRateBpm><Value>92</Value></MaximumHeartRateBpm>"))
        #expect(xml.contains("<Intensity>Active</Intensity>"))
        #expect(xml.contains("<TriggerMethod>Manual</TriggerMethod>"))
        // The drop splits the track in two; the 0 bpm sample has no trackpoint and no split.
        #expect(Self.count("<Track>", in: xml) == 2)
        #expect(Self.count("<Trackpoint>", in: xml) == 7)
        #expect(!xml.contains("<Value>0</Value>"))
        #expect(xml.contains("<Time>2026-11-23T15:42:02.123Z</Time>"))
        #expect(xml.contains("<Time>2026-11-23T15:42:13.123Z</Time>"))
        #expect(xml.contains("<Notes>Polar H10 &lt;7E102030&gt; &amp; &quot;friends&quot;</Notes>"))
        // Elements in the schema's order.
        let order = [
            "<Id>", "<Lap ", "<TotalTimeSeconds>", "<DistanceMeters>", "<Calories>", "<AverageHeartRateBpm>",
            "<MaximumHeartRateBpm>", "<Intensity>", "<TriggerMethod>", "<Track>", "</Lap>", "<Notes>",
        ]
        let positions = order.compactMap { xml.range(of: $0)?.lowerBound }
        #expect(positions.count == order.count)
        #expect(positions == positions.sorted())
    }

    @Test func tracksSplitOnlyAtGaps() {
        var activity = Self.activityWithADrop()
        let tracks = TCXWriter.tracks(activity)
        #expect(tracks.map(\.count) == [4, 3])
        #expect(tracks.first?.map(\.bpm) == [71, 72, 74, 75])
        activity.trackpoints = activity.trackpoints.map { .init(time: $0.time, bpm: 0) }
        #expect(TCXWriter.tracks(activity).isEmpty)
        #expect(!TCXWriter.document(activity).contains("<Track>"))
    }

    @Test func valuesOutsideTheSchemaAreNeverWritten() {
        var activity = Self.activityWithADrop()
        activity.sport = "Swimming"
        activity.averageBPM = 0
        activity.maximumBPM = 300
        activity.calories = 1_000_000
        activity.totalSeconds = .nan
        activity.trackpoints = [.init(time: Self.start, bpm: 400)]
        activity.notes = "bell \u{7} and \u{FFFF}"
        let xml = TCXWriter.document(activity)
        #expect(xml.contains(#"<Activity Sport="Other">"#))
        #expect(!xml.contains("<AverageHeartRateBpm>"))
        #expect(xml.contains("<MaximumHeartRateBpm><Value>255</Value></MaximumHeartRateBpm>"))
        #expect(xml.contains("<Calories>65535</Calories>"))
        #expect(xml.contains("<TotalTimeSeconds>0</TotalTimeSeconds>"))
        #expect(xml.contains("<HeartRateBpm><Value>255</Value></HeartRateBpm>"))
        #expect(xml.contains("<Notes>bell \u{FFFD} and \u{FFFD}</Notes>"))
    }

    @Test func decimals() {
        #expect(TCXWriter.decimal(0) == "0")
        #expect(TCXWriter.decimal(3600) == "3600")
        #expect(TCXWriter.decimal(12.5) == "12.5")
        #expect(TCXWriter.decimal(1.05) == "1.05")
        #expect(TCXWriter.decimal(0.001) == "0.001")
        #expect(TCXWriter.decimal(0.0004) == "0")
        #expect(TCXWriter.decimal(-1) == "0")
        #expect(TCXWriter.decimal(.infinity) == "0")
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let schema = root.deletingLastPathComponent().appendingPathComponent(
        "shared/specs/TrainingCenterDatabasev2.xsd")

    static func xmllint() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map {
            URL(fileURLWithPath: String($0)).appendingPathComponent("xmllint")
        }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The document with a drop, and one with an activity only a stub of, against Garmin's schema.
    @Test(arguments: [false, true]) func validAgainstTheSchema(minimal: Bool) async throws {
        guard let xmllint = Self.xmllint() else {
            // .ci/run installs it: its absence is a failure, not a skip.
            Issue.record("xmllint is not installed (apt-get install libxml2-utils; .ci/run does)")
            return
        }
        guard FileManager.default.fileExists(atPath: Self.schema.path) else {
            let reason = "the schema is not at \(Self.schema.path)"
            print("SKIPPED: TCX schema validation because \(reason)")
            withKnownIssue("SKIPPED: \(reason)") { Issue.record("TCX schema validation not run") }
            return
        }
        var activity = Self.activityWithADrop()
        if minimal {
            activity = TCXActivity(
                start: Self.start, sport: "Other", trackpoints: [], totalSeconds: 0, averageBPM: nil,
                maximumBPM: nil)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrm-\(UUID().uuidString).tcx")
        defer { try? FileManager.default.removeItem(at: file) }
        try TCXWriter.document(activity).write(to: file, atomically: true, encoding: .utf8)
        let result = try await HRMProcess.run(
            ["--noout", "--schema", Self.schema.path, file.path], executable: xmllint)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("validates"), "\(result.stderr)")
    }
}
