import Foundation
import Testing

/// `hrm readiness`, the built binary against hrm-sim's resting strap (`morning`: frames of 8 RR
/// intervals, 20 a second, so a minute of beats takes a few hundred milliseconds and the reading
/// ends by its beats, never by a clock): its figures checked against RMSSD computed here from the
/// RR intervals its recording kept, its recording's last line, SQLite's own shell reading the
/// index, and its verdicts against a baseline of readings the test wrote.
@Suite struct ReadinessBinaryTests {
    typealias Library = SessionLibraryBinaryTests.Library

    static func reading(
        _ library: Library, scenario: String = "morning",
        _ arguments: [String] = ["--json", "--duration", "1m"]
    ) async throws -> HRMProcess.Result {
        try await HRMProcess.runUnderSim(
            scenario, ["readiness"] + arguments, environment: library.environment, patience: .seconds(60))
    }

    static func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// The recordings of the folder, oldest first.
    static func recordings(_ library: Library) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: library.sessions, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "jsonl" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test func aReadingIsScoredFromItsBeatsRecordedAndIndexed() async throws {
        let library = try Library()
        defer { library.remove() }
        let result = try await Self.reading(library)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines.count == 1)
        let json = try Self.object(try #require(result.stdoutLines.first))
        #expect(json["scored"] as? Bool == true)
        #expect(json["refused"] is NSNull)
        #expect(json["baseline"] as? String == "building")
        #expect(json["baseline_readings_7d"] as? Int == 0)
        #expect(json["ln_rmssd_verdict"] is NSNull)
        #expect(result.stderr.contains("Lie still"), "\(result.stderr)")

        // The recording: hrm record's, command "readiness", its last line the result.
        let files = try Self.recordings(library)
        try #require(files.count == 1)
        #expect(json["path"] as? String == files[0].path)
        let lines = WatchBinaryTests.lines(try String(contentsOf: files[0], encoding: .utf8))
        #expect(lines.first?["command"] as? String == "readiness")
        let last = try #require(lines.last)
        #expect(last["type"] as? String == "readiness")
        for key in ["beats", "corrected_beats", "ln_rmssd", "rmssd_ms", "resting_hr", "seconds"] {
            #expect((last[key] as? NSNumber)?.doubleValue == (json[key] as? NSNumber)?.doubleValue, "\(key)")
        }

        // The figures, by their definitions over the RR intervals recorded, up to a minute of them
        // (the scenario's beats are clean: nothing to correct).
        var rr: [Double] = []
        for line in lines where line["type"] as? String == "measurement" {
            rr += (line["rr_ms"] as? [Double]) ?? []
        }
        var taken: [Double] = []
        for interval in rr where taken.reduce(0, +) < 60_000 { taken.append(interval) }
        let squares = zip(taken, taken.dropFirst()).map { ($1 - $0) * ($1 - $0) }
        let rmssd = (squares.reduce(0, +) / Double(squares.count)).squareRoot()
        let restingHR = 60_000 / (taken.reduce(0, +) / Double(taken.count))
        #expect(json["beats"] as? Int == taken.count)
        #expect(json["corrected_beats"] as? Int == 0)
        let measured = try #require(json["rmssd_ms"] as? Double)
        #expect(abs(measured - rmssd) < 0.01, "\(measured) against \(rmssd)")
        #expect(abs(try #require(json["ln_rmssd"] as? Double) - log(rmssd)) < 0.0002)
        #expect(abs(try #require(json["resting_hr"] as? Double) - restingHR) < 0.06)

        // The index's row, read by SQLite's shell; and made again from the recording when the
        // index is gone, the reading not lost.
        let row = "1|\(json["ln_rmssd"] ?? "")|\(json["beats"] ?? "")\n"
        #expect(try await library.sqlite("SELECT count(*), ln_rmssd, beats FROM readings;") == row)
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: library.index + suffix)
        }
        #expect(try await library.sessions().status == 0)
        #expect(try await library.sqlite("SELECT count(*), ln_rmssd, beats FROM readings;") == row)
    }

    /// A reading written as hrm readiness writes it: a minute of beats, then its `readiness` line.
    static func prior(_ library: Library, daysAgo: Double, ln: Double, resting: Double, scored: Bool = true)
        throws
    {
        let start = Date().addingTimeInterval(-daysAgo * 86_400)
        let name = try library.add(start: start, minutes: 1)
        let url = library.sessions.appendingPathComponent(name)
        let time = SessionLibraryBinaryTests.iso(start.addingTimeInterval(61))
        let figures =
            scored
            ? #""scored":true,"refused":null,"beats":60,"corrected_beats":0,"seconds":60.5,"ln_rmssd":\#(ln),"rmssd_ms":\#(exp(ln)),"resting_hr":\#(resting)"#
            : #""scored":false,"refused":"artefacts","beats":60,"corrected_beats":9,"seconds":60.5,"ln_rmssd":null,"rmssd_ms":null,"resting_hr":null"#
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(
            contentsOf: Data((#"{"type":"readiness","time":"\#(time)","# + figures + "}\n").utf8))
        try handle.close()
    }

    @Test func aBaselineOfEarlierReadingsGivesVerdicts() async throws {
        let library = try Library()
        defer { library.remove() }
        // The last 7 days: ln RMSSD 4.3, 4.4, 4.5 (mean 4.4), resting 62, 63, 64 (mean 63); with
        // the two of the 30 days, SD 0.158 and 2.236. Neither the reading of 40 days ago nor
        // the refused one counts.
        for (days, ln, resting) in [
            (1.0, 4.3, 62.0), (2, 4.4, 63), (3, 4.5, 64), (10, 4.2, 60), (20, 4.6, 66),
        ] {
            try Self.prior(library, daysAgo: days, ln: ln, resting: resting)
        }
        try Self.prior(library, daysAgo: 40, ln: 1.0, resting: 99)
        try Self.prior(library, daysAgo: 0.5, ln: 0, resting: 0, scored: false)
        let result = try await Self.reading(library)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try Self.object(try #require(result.stdoutLines.first))
        #expect(json["baseline"] as? String == "built")
        #expect(json["baseline_readings_7d"] as? Int == 3)
        #expect(json["baseline_readings_30d"] as? Int == 5)
        #expect(json["ln_rmssd_mean_7d"] as? Double == 4.4)
        #expect(json["ln_rmssd_sd_30d"] as? Double == 0.1581)
        #expect(json["resting_hr_mean_7d"] as? Double == 63)
        #expect(json["resting_hr_sd_30d"] as? Double == 2.24)
        // The strap at rest: ln RMSSD about 3.8 and 57 bpm, both below their bands.
        #expect(json["ln_rmssd_verdict"] as? String == "lower")
        #expect(json["resting_hr_verdict"] as? String == "lower")

        // The same as text, now with one more reading in the baseline (the one just taken).
        let text = try await Self.reading(library, ["--duration", "1m"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdoutLines.count == 4, "\(text.stdout)")
        #expect(text.stdoutLines.first?.hasPrefix("Readiness ") == true)
        #expect(
            text.stdoutLines.contains {
                $0.hasPrefix("ln RMSSD") && $0.contains("lower than usual (7-day mean")
            })
        #expect(text.stdoutLines.contains { $0.hasPrefix("resting HR") && $0.contains("lower than usual") })
        #expect(
            text.stdoutLines.last
                == "baseline    4 readings in the last 7 days (their mean), 6 in the last 30 (±1 SD)")
    }

    @Test func aReadingWithTooManyCorrectedBeatsIsRefused() async throws {
        let library = try Library()
        defer { library.remove() }
        let result = try await Self.reading(library, scenario: "morning-artefacts")
        #expect(result.status == 65, "\(result.stderr)")
        let json = try Self.object(try #require(result.stdoutLines.first))
        #expect(json["scored"] as? Bool == false)
        #expect(json["refused"] as? String == "artefacts")
        #expect(json["ln_rmssd"] is NSNull)
        let beats = try #require(json["beats"] as? Int)
        let corrected = try #require(json["corrected_beats"] as? Int)
        #expect(Double(corrected) > Double(beats) * 0.05)
        #expect(
            result.stderr.contains("not scored: \(corrected) of \(beats) beats"), "\(result.stderr)")
        #expect(result.stderr.contains("more than 5 %"), "\(result.stderr)")
        // Recorded all the same, with the refusal, and no reading in the index.
        let files = try Self.recordings(library)
        try #require(files.count == 1)
        let last = try #require(
            WatchBinaryTests.lines(try String(contentsOf: files[0], encoding: .utf8)).last)
        #expect(last["refused"] as? String == "artefacts")
        #expect(try await library.sessions().status == 0)
        #expect(try await library.sqlite("SELECT count(*) FROM readings;") == "0\n")
    }

    @Test func aLinkThatDropsLeavesTooFewBeats() async throws {
        let library = try Library()
        defer { library.remove() }
        let result = try await Self.reading(library, scenario: "morning-drop", ["--duration", "1m"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.contains("the link to the strap dropped during the reading"), "\(result.stderr)")
        #expect(result.stderr.contains("not scored: too few beats: 24 over"), "\(result.stderr)")
    }

    /// SIGTERM once hrm says to lie still, against hrm-sim's 1 Hz strap (its reading would take
    /// a minute): not scored, exit 1, and the recording kept without a result.
    @Test func anInterruptedReadingIsNotScored() async throws {
        let library = try Library()
        defer { library.remove() }
        let script = """
            "\(HRMProcess.binary.path)" readiness --json --duration 1m 2>"$XDG_DATA_HOME/stderr" &
            pid=$!
            until grep -q 'Lie still' "$XDG_DATA_HOME/stderr" 2>/dev/null; do
                kill -0 $pid 2>/dev/null || break
                sleep 0.05
            done
            kill -TERM $pid; wait $pid; echo "exit $?"; cat "$XDG_DATA_HOME/stderr"
            """
        let result = try await HRMProcess.runUnderSim(
            "basic", [], shell: script, environment: library.environment, patience: .seconds(60))
        #expect(result.stdoutLines.contains("exit 1"), "\(result.stdout)")
        #expect(
            result.stdout.contains("interrupted before the reading was complete: not scored"),
            "\(result.stdout)")
        #expect(!result.stdout.contains("\"type\":\"readiness\""), "no result: \(result.stdout)")
        let files = try Self.recordings(library)
        try #require(files.count == 1)
        let lines = WatchBinaryTests.lines(try String(contentsOf: files[0], encoding: .utf8))
        #expect(lines.first?["command"] as? String == "readiness")
        #expect(!lines.contains { $0["type"] as? String == "readiness" })
    }

    @Test func noStrapMeansNoReading() async throws {
        let library = try Library()
        defer { library.remove() }
        let result = try await HRMProcess.runUnderSim(
            "basic", ["readiness", "--scan-timeout", "1", "C0:FF:EE:99:99:99"],
            environment: library.environment)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("C0:FF:EE:99:99:99"), "\(result.stderr)")
        #expect(try Self.recordings(library).isEmpty, "nothing recorded")
    }

    /// On a terminal (util-linux `script`): the countdown is one line redrawn in place, gone
    /// before the result; no plain "left" lines.
    @Test func onATerminalTheCountdownIsOneLine() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("/usr/bin/script is not installed (Debian's bsdutils, an essential package)")
            return
        }
        let library = try Library()
        defer { library.remove() }
        let result = try await HRMProcess.runUnderSim(
            "morning", [],
            shell:
                "TERM=xterm /usr/bin/script -qefc \"'\(HRMProcess.binary.path)' readiness --duration 1m\" /dev/null",
            environment: library.environment, patience: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout
        #expect(
            text.contains(/\r\u{1B}\[K  0:[0-5][0-9] left  5[0-9] bpm  lie still/), "\(text.debugDescription)"
        )
        #expect(!text.contains("hrm readiness: 0:30 left"), "\(text.debugDescription)")
        // The countdown is taken off before the result.
        let shown = try #require(text.range(of: "Readiness "))
        let before = text[..<shown.lowerBound]
        let lastDraw = try #require(before.range(of: "lie still", options: .backwards))
        #expect(before[lastDraw.upperBound...].contains("\r\u{1B}[K"), "\(text.debugDescription)")
    }

    @Test func aDurationOutsideOneToTenMinutesIsAUsageError() async throws {
        for value in ["30s", "11m", "-5", "soon"] {
            let result = try await HRMProcess.run(["readiness", "--duration", value])
            #expect(result.status == 64, "\(value): \(result.stderr)")
        }
    }
}
