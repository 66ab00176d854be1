import Foundation
import Testing

/// `hrm export` for the basic job: SESSION as `latest`, `-1`, `-2` or a bare name from the
/// sessions folder, and the format from `-o FILE`'s extension (#26 item 2); `hrm sessions` says
/// where it looked when there is nothing.
@Suite struct ExportSessionChoiceTests {
    /// A data folder whose sessions folder holds three recordings of 2, 4 and 6 measurements,
    /// oldest first by name (the names start with the start time).
    static func sessions() throws -> (data: URL, folder: URL) {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("hrm-export-\(UUID())")
        let folder = data.appendingPathComponent("hrm/sessions")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (index, count) in [2, 4, 6].enumerated() {
            let name = "2026-11-2\(index + 1)T08-00-00Z_D2-4B-7E-10-20-30.jsonl"
            try ReplayBinaryTests.recording(Array(ReplayBinaryTests.frames.prefix(count)))
                .write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return (data, folder)
    }

    /// The measurement rows of a CSV export.
    static func rows(_ path: String) throws -> Int {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count - 1
    }

    @Test func aSessionByItsPlaceOrItsNameAndTheFormatFromTheExtension() async throws {
        let (data, folder) = try Self.sessions()
        defer { try? FileManager.default.removeItem(at: data) }
        let environment = ["XDG_DATA_HOME": data.path]
        for (session, measurements) in [
            ("latest", 6), ("-1", 6), ("-2", 4), ("-3", 2),
            ("2026-11-22T08-00-00Z_D2-4B-7E-10-20-30", 4),
            ("2026-11-21T08-00-00Z_D2-4B-7E-10-20-30.jsonl", 2),
        ] {
            let out = data.appendingPathComponent("out-\(session).csv").path
            let result = try await HRMProcess.run(["export", session, "-o", out], environment: environment)
            #expect(result.status == 0, "\(session): \(result.stderr)")
            #expect(try Self.rows(out) == measurements, "\(session)")
        }
        // .jsonl and .json are JSON lines: what was recorded, as watch printed it.
        let jsonl = data.appendingPathComponent("out.jsonl").path
        let result = try await HRMProcess.run(["export", "-1", "-o", jsonl], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: jsonl, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.contains(#""type":"measurement""#) }.count == 6)
        // A path is itself, wherever the sessions folder is.
        let path = folder.appendingPathComponent("2026-11-23T08-00-00Z_D2-4B-7E-10-20-30.jsonl").path
        let byPath = try await HRMProcess.run(["export", path, "--format", "csv"], environment: environment)
        #expect(byPath.stdout.split(separator: "\n").count == 7)
    }

    @Test func whatCannotBeFoundOrToldIsSaid() async throws {
        let (data, folder) = try Self.sessions()
        defer { try? FileManager.default.removeItem(at: data) }
        let environment = ["XDG_DATA_HOME": data.path]
        let tooFar = try await HRMProcess.run(["export", "-4", "--format", "csv"], environment: environment)
        #expect(tooFar.status == 66)
        #expect(tooFar.stderr.contains("-4: \(folder.path) holds 3 recordings"), "\(tooFar.stderr)")
        let noFormat = try await HRMProcess.run(["export", "-1", "-o", "x.data"], environment: environment)
        #expect(noFormat.status == 64)
        #expect(noFormat.stderr.contains("cannot tell the format from x.data"), "\(noFormat.stderr)")
        let neither = try await HRMProcess.run(["export", "-1"], environment: environment)
        #expect(neither.status == 64)
        #expect(neither.stderr.contains("give --format"), "\(neither.stderr)")
        // Dash words that are not an index are the unknown options they look like.
        let unknown = try await HRMProcess.run(["export", "--frmat", "csv", "-1"], environment: environment)
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("Unknown option '--frmat'"), "\(unknown.stderr)")
        let two = try await HRMProcess.run(
            ["export", "-1", "-2", "--format", "csv"], environment: environment)
        #expect(two.status == 64)
    }

    @Test func noSessionsSaysWhereItLooked() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("hrm-none-\(UUID())")
        defer { try? FileManager.default.removeItem(at: data) }
        let result = try await HRMProcess.run(["sessions"], environment: ["XDG_DATA_HOME": data.path])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("no recordings in \(data.path)/hrm/sessions yet"), "\(result.stderr)")
        let latest = try await HRMProcess.run(
            ["export", "latest", "--format", "csv"], environment: ["XDG_DATA_HOME": data.path])
        #expect(latest.status == 66)
        #expect(latest.stderr.contains("holds no recordings"), "\(latest.stderr)")
    }
}
