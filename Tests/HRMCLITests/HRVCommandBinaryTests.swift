import Foundation
import HRV
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm hrv` run as a built binary, on files and standard input.
@Suite struct HRVCommandBinaryTests {
    /// Files in a directory of their own, removed afterwards.
    final class Files {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrm-hrv-\(UUID().uuidString)")

        init() throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func write(_ name: String, _ text: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
    }

    /// A steady series with some variability: 900, 930, 880, 950, 870, ... ms.
    static func series(_ count: Int) -> [Double] {
        (0..<count).map { (index: Int) -> Double in
            let wobble = Double((index * 37) % 90) - 45
            let alternation = index.isMultiple(of: 2) ? 12.5 : 0
            return 900 + wobble + alternation
        }
    }

    static func numbers(_ values: [Double]) -> String {
        values.map { HRVText.number($0) }.joined(separator: "\n") + "\n"
    }

    /// What `hrm hrv --json` must print for `rr` read as one run.
    static func expected(_ rr: [Double], correcting: Bool) -> String {
        var line = JSONLine(type: "hrv")
        HRVRendering.addFields(of: HRV.analyse(rr: rr, correcting: correcting), to: &line)
        return line.line
    }

    /// A field of a JSON line, as text.
    static func field(_ key: String, _ line: String) -> String? {
        guard let value = try? JSONValue.parse(line)[key] else { return nil }
        switch value {
        case .number(let number): return HRVText.number(number)
        case .null: return "null"
        case .string(let text): return text
        default: return nil
        }
    }

    @Test func numbersFile() async throws {
        let files = try Files()
        let rr = Self.series(300)
        let path = try files.write("rr.txt", "# RR in ms\n" + Self.numbers(rr))
        let result = try await HRMProcess.run(["hrv", "--json", path])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdoutLines == [Self.expected(rr, correcting: true)])
        #expect(result.stdoutLines.first?.hasPrefix(#"{"type":"hrv","beats":"#) == true)
        #expect(
            result.stdoutLines.first?.contains(#""start""#) == false, "no start and end over the whole input")
    }

    @Test func noCorrectionTakesTheIntervalsAsTheyAre() async throws {
        var rr = Self.series(300)
        rr[100] = 450  // an extra beat's halves
        rr.insert(rr[100], at: 101)
        rr[200] = 1800  // a missed beat
        let result = try await HRMProcess.run(["hrv", "--json", "--no-correction"], stdin: Self.numbers(rr))
        #expect(result.status == 0)
        #expect(result.stdoutLines == [Self.expected(rr, correcting: false)])
        #expect(Self.field("beats", result.stdoutLines.first ?? "") == String(rr.count))
        #expect(Self.field("artefacts", result.stdoutLines.first ?? "") == "0")
        let corrected = try await HRMProcess.run(["hrv", "--json"], stdin: Self.numbers(rr))
        #expect(corrected.stdoutLines == [Self.expected(rr, correcting: true)], "correction is on by default")
    }

    @Test func watchJSONLines() async throws {
        let lines = [
            #"{"type":"status","time":"2026-11-22T11:33:08.449Z","state":"scanning"}"#,
            #"{"type":"info","time":"2026-11-22T11:33:08.791Z","device":"D2:4B:7E:10:20:30","name":"Polar H10 7E102030","location":"chest","battery":87,"manufacturer":"Polar Electro Oy","model":"H10"}"#,
            #"{"type":"measurement","time":"2026-11-22T10:06:23.968Z","device":"D2:4B:7E:10:20:30","bpm":71,"contact":"detected","energy_kj":null,"rr_1024":[872],"rr_ms":[851.5625],"format":"uint8"}"#,
            #"{"type":"measurement","time":"2026-11-22T10:06:24.968Z","device":"D2:4B:7E:10:20:30","bpm":73,"contact":"detected","energy_kj":null,"rr_1024":[849,870],"rr_ms":[829.1015625,849.609375],"format":"uint8"}"#,
            #"{"type":"battery","time":"2026-11-22T11:33:16.423Z","device":"D2:4B:7E:10:20:30","percent":86}"#,
            #"{"type":"status","time":"2026-11-22T11:33:19.944Z","device":"D2:4B:7E:10:20:30","state":"stopped","detail":"9 measurements"}"#,
        ]
        let result = try await HRMProcess.run(
            ["hrv", "--json", "--no-correction"], stdin: lines.joined(separator: "\n"))
        #expect(result.status == 0)
        #expect(
            result.stdoutLines == [Self.expected([851.5625, 829.1015625, 849.609375], correcting: false)])
    }

    @Test func watchCSV() async throws {
        let files = try Files()
        let csv = """
            time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format
            2026-11-22T10:06:23.968Z,D2:4B:7E:10:20:30,71,detected,,872,851.5625,uint8
            2026-11-22T10:06:24.968Z,D2:4B:7E:10:20:30,73,detected,,849 870,829.1015625 849.609375,uint8
            2026-11-22T10:06:25.968Z,D2:4B:7E:10:20:30,73,detected,,,,uint8

            """
        let path = try files.write("watch.csv", csv)
        let result = try await HRMProcess.run(["hrv", "--json", "--no-correction", path])
        #expect(result.status == 0)
        #expect(
            result.stdoutLines == [Self.expected([851.5625, 829.1015625, 849.609375], correcting: false)])
    }

    @Test func standardInputByDashAmongFiles() async throws {
        let files = try Files()
        let first = try files.write("a.txt", "800\n800\n800\n")
        let result = try await HRMProcess.run(
            ["hrv", "--json", "--no-correction", first, "-"], stdin: "1000\n1000\n")
        #expect(result.status == 0)
        #expect(Self.field("beats", result.stdoutLines.first ?? "") == "5")
        // 800 to 1000 lies between two sources: not a successive difference.
        #expect(Self.field("rmssd_ms", result.stdoutLines.first ?? "") == "0")
    }

    @Test func severalFilesInOrderEachARun() async throws {
        let files = try Files()
        let a = try files.write("a.txt", "800\n810\n")
        let b = try files.write("b.jsonl", #"{"type":"measurement","rr_ms":[1000,990]}"# + "\n")
        let result = try await HRMProcess.run(["hrv", "--json", "--no-correction", a, b])
        #expect(result.status == 0)
        let line = result.stdoutLines.first ?? ""
        #expect(Self.field("beats", line) == "4")
        #expect(Self.field("mean_nn_ms", line) == "900")
        #expect(Self.field("rmssd_ms", line) == "10", "only 800-810 and 1000-990")
        #expect(Self.field("pnn50", line) == "0")
    }

    @Test func aDisconnectionIsAGap() async throws {
        let lines = [
            #"{"type":"measurement","rr_ms":[800,810]}"#,
            #"{"type":"status","device":"D2:4B:7E:10:20:30","state":"disconnected"}"#,
            #"{"type":"status","device":"D2:4B:7E:10:20:30","state":"reconnecting"}"#,
            #"{"type":"measurement","rr_ms":[1000,990]}"#,
        ]
        let result = try await HRMProcess.run(
            ["hrv", "--json", "--no-correction"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0)
        #expect(Self.field("rmssd_ms", result.stdoutLines.first ?? "") == "10")
    }

    @Test func windowsAndSteps() async throws {
        // 120 beats of about a second: 120 s of beats, each minute ending on a beat.
        let rr = (0..<120).map { $0.isMultiple(of: 2) ? 995.0 : 1005.0 }
        let input = Self.numbers(rr)
        let plain = try await HRMProcess.run(["hrv", "--json", "--window", "1m"], stdin: input)
        #expect(plain.status == 0)
        try #require(plain.stdoutLines.count == 2)
        #expect(plain.stdoutLines[0].hasPrefix(#"{"type":"hrv","start":0,"end":60,"beats":"#))
        #expect(plain.stdoutLines[1].hasPrefix(#"{"type":"hrv","start":60,"end":120,"beats":"#))
        #expect(Self.field("beats", plain.stdoutLines[0]) == "60")

        let sliding = try await HRMProcess.run(
            ["hrv", "--json", "--window", "60", "--step", "30s"], stdin: input)
        #expect(sliding.status == 0)
        #expect(sliding.stdoutLines.compactMap { Self.field("start", $0) } == ["0", "30", "60"])
        #expect(sliding.stdoutLines.compactMap { Self.field("end", $0) } == ["60", "90", "120"])

        let text = try await HRMProcess.run(["hrv", "--window", "60", "--step", "30"], stdin: input)
        #expect(text.status == 0)
        try #require(text.stdoutLines.count == 4)
        #expect(text.stdoutLines[0].contains("120 RR intervals"))
        #expect(text.stdoutLines[0].contains("windows of 1:00 every 0:30"))
        #expect(text.stdoutLines[1].hasPrefix("0:00-1:00  RMSSD "))
        #expect(text.stdoutLines[3].hasPrefix("1:00-2:00  RMSSD "))
    }

    @Test func inputShorterThanTheWindow() async throws {
        let result = try await HRMProcess.run(
            ["hrv", "--window", "5m"], stdin: Self.numbers(Self.series(100)))
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("less than one --window of 5:00"))
    }

    @Test func textOutput() async throws {
        let result = try await HRMProcess.run(["hrv"], stdin: "800\n850\n790\n")
        #expect(result.status == 0)
        #expect(
            result.stdoutLines == [
                "3 RR intervals, 0:02.44 of beats, artefact correction on",
                "0:00-0:02.44  " + HRVRendering.text(HRV.analyse(rr: [800, 850, 790])),
            ])
    }

    @Test func aBadLineExits65AndPrintsNothing() async throws {
        let files = try Files()
        let good = try files.write("good.txt", Self.numbers(Self.series(200)))
        let bad = try files.write(
            "bad.jsonl",
            #"{"type":"measurement","rr_ms":[800]}"# + "\n" + #"{"type":"measurement","rr_ms":[8"# + "\n")
        for json in [true, false] {
            let result = try await HRMProcess.run(["hrv"] + (json ? ["--json"] : []) + [good, bad])
            #expect(result.status == 65)
            #expect(result.stdout.isEmpty, "nothing half-printed")
            #expect(result.stderr.contains("bad.jsonl, line 2: not valid JSON"))
        }
        let range = try await HRMProcess.run(["hrv", "--json"], stdin: "800\n\n-12\n")
        #expect(range.status == 65)
        #expect(range.stdout.isEmpty)
        #expect(range.stderr.contains("standard input, line 3: the RR interval -12 ms is out of range"))
    }

    @Test func unreadableFileExits66() async throws {
        let files = try Files()
        let good = try files.write("good.txt", "800\n810\n")
        let missing = files.directory.appendingPathComponent("missing.txt").path
        let result = try await HRMProcess.run(["hrv", "--json", good, missing])
        #expect(result.status == 66)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("cannot read \(missing): No such file or directory"))
        let directory = try await HRMProcess.run(["hrv", files.directory.path])
        #expect(directory.status == 66)
        #expect(directory.stderr.contains("not a regular file (a directory)"))
    }

    @Test func noIntervals() async throws {
        let result = try await HRMProcess.run(
            ["hrv", "--json"], stdin: "# nothing\n" + #"{"type":"status","state":"scanning"}"#)
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("no RR intervals in input"))
    }

    @Test func usageErrors() async throws {
        let step = try await HRMProcess.run(["hrv", "--step", "30"], stdin: "800\n")
        #expect(step.status == 64)
        #expect(step.stderr.contains("--step needs --window"))
        let window = try await HRMProcess.run(["hrv", "--window", "-5"], stdin: "800\n")
        #expect(window.status == 64)
    }

    @Test func helpTeaches() async throws {
        let result = try await HRMProcess.run(["hrv", "--help"])
        #expect(result.status == 0)
        for words in ["rr_ms", "hrm watch --csv", "--no-correction", "Exit status", "66", "5000 ms"] {
            #expect(result.stdout.contains(words), "\(words)")
        }
        let root = try await HRMProcess.run(["--help"])
        #expect(root.stdout.contains("hrv"))
    }
}
