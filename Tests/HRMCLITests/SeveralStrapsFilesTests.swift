import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// Files of several straps (a recording of `watch --all`, `watch --json`/`--csv` of two straps)
/// read by `hrm hrv`, `hrm export` and `hrm sessions`, the built binary: each strap reads as its
/// own lines alone would, never the two interleaved.
@Suite struct PerStrapHRVTests {
    typealias Two = TwoStrapsRecording
    let files: HRVCommandBinaryTests.Files
    let lines = Two.lines()
    let recording: String

    init() throws {
        files = try HRVCommandBinaryTests.Files()
        recording = try files.write("two.jsonl", Two.text(lines))
    }

    /// `hrm hrv ARGUMENTS` on the file `name` holding `text`.
    func hrv(_ arguments: [String], _ name: String, _ text: String) async throws -> HRMProcess.Result {
        try await HRMProcess.run(["hrv"] + arguments + [try files.write(name, text)])
    }

    /// `{"type":"hrv",...}` with `"device":"..."` after the type.
    static func withDevice(_ line: String, _ device: String) -> String {
        line.replacingOccurrences(of: #"{"type":"hrv","#, with: #"{"type":"hrv","device":"\#(device)","#)
    }

    @Test(arguments: [[], ["--window", "40", "--step", "20"], ["--no-correction"]])
    func eachStrapAsItsLinesAlone(options: [String]) async throws {
        let both = try await HRMProcess.run(["hrv", "--json"] + options + [recording])
        #expect(both.status == 0, "\(both.stderr)")
        #expect(both.stderr.isEmpty)
        let a = try await hrv(["--json"] + options, "a.jsonl", Two.text(Two.alone(Two.a, lines)))
        let b = try await hrv(["--json"] + options, "b.jsonl", Two.text(Two.alone(Two.b, lines)))
        #expect(a.status == 0 && b.status == 0)
        #expect(!a.stdoutLines.isEmpty && !b.stdoutLines.isEmpty)
        #expect(
            both.stdoutLines
                == a.stdoutLines.map { Self.withDevice($0, Two.a) }
                + b.stdoutLines.map { Self.withDevice($0, Two.b) })

        // Text: a heading per strap (its name, then the address), what its lines alone print.
        let text = try await HRMProcess.run(["hrv"] + options + [recording])
        let aText = try await hrv(options, "a.jsonl", Two.text(Two.alone(Two.a, lines)))
        let bText = try await hrv(options, "b.jsonl", Two.text(Two.alone(Two.b, lines)))
        #expect(
            text.stdoutLines
                == ["\(Two.nameA) (\(Two.a))"] + aText.stdoutLines + ["", "\(Two.nameB) (\(Two.b))"]
                + bText.stdoutLines)
    }

    /// Each strap's figures are its own: A's drop splits only A's run, B's missed beat is
    /// corrected in B's series, and neither has the interleaving's huge successive differences.
    @Test func theFiguresAreEachStrapsOwn() async throws {
        let result = try await HRMProcess.run(["hrv", "--json", recording])
        let objects = WatchBinaryTests.lines(result.stdout)
        try #require(objects.count == 2)
        #expect(objects.map { $0["device"] as? String } == [Two.a, Two.b])
        let rmssd = objects.compactMap { $0["rmssd_ms"] as? Double }
        #expect(rmssd.count == 2 && rmssd.allSatisfy { $0 < 60 }, "\(rmssd)")
        #expect((objects[1]["artefacts"] as? Int ?? 0) >= 2, "B's missed beat split")
        #expect((objects[0]["mean_hr"] as? Double ?? 0) > 120)
        #expect((objects[1]["mean_hr"] as? Double ?? 200) < 100)
        // A without its drop: the drop was a gap in A's series, not the end of B's.
        let beatsA = objects[0]["beats"] as? Int ?? 0
        let expectedA = Two.alone(Two.a, lines).filter { $0.hasPrefix(#"{"type":"measurement""#) }.count * 2
        #expect(beatsA <= expectedA && beatsA > expectedA - 10)
    }

    /// `watch --json` (no header, no hex) and `watch --csv` (the device column) split the same way.
    @Test func watchJSONAndCSVSplitByDevice() async throws {
        let fromRecording = try await HRMProcess.run(["hrv", "--json", recording])
        let json = try await hrv(["--json"], "watch.jsonl", Two.text(Two.watchJSON(lines)))
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdoutLines == fromRecording.stdoutLines)

        let csv = try await hrv(["--json"], "watch.csv", Two.csv(lines))
        #expect(csv.status == 0, "\(csv.stderr)")
        let aCSV = try await hrv(["--json"], "a.csv", Two.csv(Two.alone(Two.a, lines)))
        let bCSV = try await hrv(["--json"], "b.csv", Two.csv(Two.alone(Two.b, lines)))
        #expect(
            csv.stdoutLines
                == aCSV.stdoutLines.map { Self.withDevice($0, Two.a) }
                + bCSV.stdoutLines.map { Self.withDevice($0, Two.b) })
        // CSV has no status lines: B's series from CSV is B's from the recording.
        #expect(csv.stdoutLines.last == fromRecording.stdoutLines.last)
    }

    @Test func deviceTakesOneStrapAlone() async throws {
        let b = try await hrv([], "b.jsonl", Two.text(Two.alone(Two.b, lines)))
        for wanted in [Two.b, "c0-ff-ee-00-00-02", "tickr"] {
            let picked = try await HRMProcess.run(["hrv", "--device", wanted, recording])
            #expect(picked.status == 0, "\(wanted): \(picked.stderr)")
            #expect(picked.stdoutLines == b.stdoutLines, "\(wanted): printed as one strap's input")
        }
        let json = try await HRMProcess.run(["hrv", "--json", "--device", "hrm-pro", recording])
        let a = try await hrv(["--json"], "a.jsonl", Two.text(Two.alone(Two.a, lines)))
        #expect(json.stdoutLines == a.stdoutLines)
    }

    @Test func aDeviceNotInTheInputIsAUsageError() async throws {
        let none = try await HRMProcess.run(["hrv", "--device", "polar", recording])
        #expect(none.status == 64)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr.contains("--device 'polar' matches no strap"))
        #expect(none.stderr.contains(#"\#(Two.a) "\#(Two.nameA)""#))
        #expect(none.stderr.contains(#"\#(Two.b) "\#(Two.nameB)""#))
        let both = try await HRMProcess.run(["hrv", "--device", "C0:FF", recording])
        #expect(both.status == 64, "a part of an address is no name")
        let ambiguous = try await hrv(
            ["--device", "strap"], "named.jsonl",
            Two.text(
                lines.map {
                    $0.replacingOccurrences(of: "1A2B", with: "Strap").replacingOccurrences(
                        of: "123456", with: "Strap")
                }))
        #expect(ambiguous.status == 64)
        #expect(ambiguous.stderr.contains("matches 2 straps"))
        let numbers = try await HRMProcess.run(["hrv", "--device", Two.a], stdin: "800\n810\n")
        #expect(numbers.status == 64)
        #expect(numbers.stderr.contains("names no strap"))
    }

    /// One strap, or none named, prints as it always did: no heading, no `device`.
    @Test func oneStrapPrintsAsBefore() async throws {
        let alone = Two.text(Two.alone(Two.a, lines))
        let result = try await hrv([], "a.jsonl", alone)
        #expect(result.stdoutLines.count == 2)
        #expect(result.stdoutLines.first?.hasSuffix("artefact correction on") == true)
        let json = try await hrv(["--json"], "a.jsonl", alone)
        #expect(json.stdoutLines.count == 1)
        #expect(json.stdout.contains(#""device""#) == false)
        // Numbers with one strap's lines: one series, as before.
        let mixed = try await hrv(["--json"], "mixed.jsonl", "800\n810\n" + alone)
        #expect(mixed.stdoutLines.count == 1)
        #expect(HRVCommandBinaryTests.field("beats", mixed.stdoutLines[0]).flatMap(Int.init) ?? 0 > 2)
    }

    /// A strap with too little for a window is left out (said on stderr); none with enough: 65.
    @Test func aStrapWithTooLittleIsLeftOut() async throws {
        // B streams 120 s, A only until its drop at 60 s.
        let short = lines.enumerated().filter { index, line in
            !(line.contains(Two.a) && line.hasPrefix(#"{"type":"measurement""#) && index > lines.count / 2)
        }.map(\.element)
        let result = try await hrv(["--json", "--window", "90"], "short.jsonl", Two.text(short))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines.count == 1)
        #expect(result.stdout.contains(Two.b))
        #expect(result.stderr.contains(#"\#(Two.a) "\#(Two.nameA)" covers"#))
        #expect(result.stderr.contains("less than one --window of 1:30: left out"))
        let none = try await HRMProcess.run(["hrv", "--window", "10m", recording])
        #expect(none.status == 65)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr.contains("no strap of the input has enough beats"))
    }
}

@Suite struct PerStrapExportTests {
    typealias Two = TwoStrapsRecording
    let folder: HRVCommandBinaryTests.Files
    let lines = Two.lines(seconds: 70)
    let recording: String

    init() throws {
        folder = try HRVCommandBinaryTests.Files()
        recording = try folder.write("two.jsonl", Two.text(lines))
    }

    func export(_ session: String, _ arguments: [String]) async throws -> (HRMProcess.Result, Data?) {
        let out = folder.directory.appendingPathComponent("out-\(UUID().uuidString)").path
        let result = try await HRMProcess.run(["export", session] + arguments + ["-o", out])
        return (result, FileManager.default.contents(atPath: out))
    }

    @Test(arguments: ["fit", "tcx"])
    func severalStrapsNeedDevice(format: String) async throws {
        let (result, written) = try await export(recording, ["--format", format])
        #expect(result.status == 64)
        #expect(written == nil, "nothing written")
        #expect(result.stderr.contains("holds 2 straps"))
        #expect(result.stderr.contains("--device"))
        #expect(result.stderr.contains(#"\#(Two.a) "\#(Two.nameA)", 67 measurements"#))
        #expect(result.stderr.contains(#"\#(Two.b) "\#(Two.nameB)", 70 measurements"#))
    }

    /// `--device` exports what a recording of that strap alone exports, byte for byte.
    @Test(arguments: ["fit", "tcx", "csv", "json"])
    func devicePicksTheStrap(format: String) async throws {
        for (device, wanted) in [(Two.a, "hrm-pro"), (Two.b, Two.b.lowercased())] {
            let alone = try folder.write("alone-\(format).jsonl", Two.text(Two.alone(device, lines)))
            let (picked, pickedBytes) = try await export(recording, ["--format", format, "--device", wanted])
            let (single, singleBytes) = try await export(alone, ["--format", format])
            #expect(picked.status == 0, "\(picked.stderr)")
            #expect(single.status == 0, "\(single.stderr)")
            #expect(pickedBytes != nil && pickedBytes == singleBytes, "\(format) of \(device)")
        }
    }

    /// The TCX of B holds B's heart rates, from B's segments (A's drop is no gap of B's).
    @Test func theTCXIsTheStrapsOwn() async throws {
        let (result, bytes) = try await export(recording, ["--format", "tcx", "--device", "tickr"])
        #expect(result.status == 0)
        let tcx = String(decoding: bytes ?? Data(), as: UTF8.self)
        let rates = tcx.components(separatedBy: "<Value>").dropFirst().compactMap {
            Int($0.prefix { $0.isNumber })
        }
        #expect(rates.count > 60)
        #expect(rates.allSatisfy { (89...90).contains($0) }, "\(Set(rates))")
        #expect(tcx.contains("Recorded by hrm from \(Two.nameB)"))
        #expect(tcx.components(separatedBy: "<Track>").count == 2, "one track: B never dropped")
        let (_, aBytes) = try await export(recording, ["--format", "tcx", "--device", Two.a])
        let aTCX = String(decoding: aBytes ?? Data(), as: UTF8.self)
        #expect(aTCX.components(separatedBy: "<Track>").count == 3, "A's drop: a new track")
    }

    /// The FIT of one strap: its records are its heart rates, one a second of its connected time.
    @Test func theFITIsTheStrapsOwn() async throws {
        let (result, bytes) = try await export(recording, ["--format", "fit", "--device", Two.a])
        #expect(result.status == 0)
        let records = try Self.recordHeartRates(Array(bytes ?? Data()))
        #expect(records.allSatisfy { (130...132).contains($0) }, "\(Set(records))")
        let (_, bBytes) = try await export(recording, ["--format", "fit", "--device", Two.b])
        let bRecords = try Self.recordHeartRates(Array(bBytes ?? Data()))
        #expect(bRecords.allSatisfy { (89...90).contains($0) }, "\(Set(bRecords))")
        // B connected for the whole 70 s; A less its 3 s drop.
        #expect(bRecords.count >= 70 && bRecords.count <= 72, "\(bRecords.count)")
        #expect(records.count == bRecords.count - 3, "\(records.count)")
    }

    /// CSV and JSON keep every strap without `--device`.
    @Test func csvAndJSONKeepEveryStrap() async throws {
        let (csv, csvBytes) = try await export(recording, ["--format", "csv"])
        #expect(csv.status == 0)
        let rows = String(decoding: csvBytes ?? Data(), as: UTF8.self).split(separator: "\n")
        #expect(rows.count == 1 + 67 + 70)
        #expect(rows.filter { $0.contains(Two.a) }.count == 67)
        #expect(rows.filter { $0.contains(Two.b) }.count == 70)
        let (json, jsonBytes) = try await export(recording, ["--format", "json"])
        #expect(json.status == 0)
        #expect(String(decoding: jsonBytes ?? Data(), as: UTF8.self) == Two.text(Two.watchJSON(lines)))
        let (none, _) = try await export(recording, ["--format", "csv", "--device", "polar"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("matches no strap"))
    }

    /// A one-strap recording: `--device` naming it changes nothing.
    @Test func oneStrapAsBefore() async throws {
        let alone = try folder.write("a.jsonl", Two.text(Two.alone(Two.a, lines)))
        let (plain, plainBytes) = try await export(alone, ["--format", "fit"])
        let (named, namedBytes) = try await export(alone, ["--format", "fit", "--device", Two.a])
        #expect(plain.status == 0 && named.status == 0)
        #expect(plainBytes == namedBytes)
    }

    /// `hrm sessions`: the first strap and `+1`; JSON names every strap in `devices`.
    @Test func sessionsShowTheFirstStrapAndTheOthers() async throws {
        let data = folder.directory.appendingPathComponent("data")
        let sessions = data.appendingPathComponent("hrm/sessions")
        try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        try Data(Two.text(lines).utf8).write(
            to: sessions.appendingPathComponent("2026-11-23T10-00-00Z.jsonl"))
        let result = try await HRMProcess.run(
            [
                "-c",
                "XDG_DATA_HOME='\(data.path)' '\(HRMProcess.binary.path)' sessions; XDG_DATA_HOME='\(data.path)' exec '\(HRMProcess.binary.path)' sessions --json",
            ],
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdoutLines.first?.contains("\(Two.a) \(Two.nameA) +1  avg 131 max 132 bpm") == true,
            "\(result.stdout)")
        let json = try #require(WatchBinaryTests.lines(result.stdout).first)
        #expect(json["devices"] as? [String] == [Two.a, Two.b])
        #expect(json["device"] as? String == Two.a)
        #expect(json["name"] as? String == Two.nameA)
        #expect(json["measurements"] as? Int == 67)
    }

    /// The heart rates of a FIT file's record messages (global 20, field 3), read by the shortest
    /// walk through its messages that the encoder's output allows: normal headers, little-endian.
    static func recordHeartRates(_ file: [UInt8]) throws -> [Int] {
        struct Truncated: Error {}
        guard file.count > 14 else { throw Truncated() }
        let headerSize = Int(file[0])
        let end = headerSize + (Int(file[4]) | Int(file[5]) << 8 | Int(file[6]) << 16 | Int(file[7]) << 24)
        guard end <= file.count else { throw Truncated() }
        var definitions: [UInt8: (global: Int, fields: [(number: UInt8, size: Int)])] = [:]
        var rates: [Int] = []
        var at = headerSize
        while at < end {
            let header = file[at]
            at += 1
            let local = header & 0x0F
            if header & 0x40 != 0 {
                guard at + 5 <= end else { throw Truncated() }
                let global = Int(file[at + 2]) | Int(file[at + 3]) << 8
                let count = Int(file[at + 4])
                at += 5
                var fields: [(number: UInt8, size: Int)] = []
                for _ in 0..<count {
                    guard at + 3 <= end else { throw Truncated() }
                    fields.append((file[at], Int(file[at + 1])))
                    at += 3
                }
                if header & 0x20 != 0 {  // developer fields: skipped
                    let developer = Int(file[at])
                    at += 1 + developer * 3
                }
                definitions[local] = (global, fields)
            } else {
                guard let definition = definitions[local] else { throw Truncated() }
                for field in definition.fields {
                    guard at + field.size <= end else { throw Truncated() }
                    if definition.global == 20, field.number == 3 { rates.append(Int(file[at])) }
                    at += field.size
                }
            }
        }
        return rates
    }
}

/// A real recording of two straps, made by `watch --all --record` under hrm-sim.
@Suite struct PerStrapSimulatedTests {
    @Test(.timeLimit(.minutes(2))) func aRecordingOfTwoStrapsReadsPerStrap() async throws {
        let files = try HRVCommandBinaryTests.Files()
        let path = files.directory.appendingPathComponent("two.jsonl").path
        let watched = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--all", "--json", "--count", "12", "--record", path])
        #expect(watched.status == 0, "\(watched.stderr)")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        let hrv = try await HRMProcess.run(["hrv", "--json", "--no-correction", path])
        #expect(hrv.status == 0, "\(hrv.stderr)")
        #expect(hrv.stdoutLines.count == 2)
        for (index, device) in ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"].enumerated() {
            let alone = try files.write(
                "\(index).jsonl", TwoStrapsRecording.text(TwoStrapsRecording.alone(device, lines)))
            let one = try await HRMProcess.run(["hrv", "--json", "--no-correction", alone])
            let expected = try #require(one.stdoutLines.first.map { PerStrapHRVTests.withDevice($0, device) })
            #expect(hrv.stdoutLines.contains(expected), "\(device)")
        }
        let refused = try await HRMProcess.run(["export", path, "--format", "tcx"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains(#"C0:FF:EE:00:00:01 "HRM-Pro:123456""#))
        #expect(refused.stderr.contains(#"C0:FF:EE:00:00:02 "TICKR 1A2B""#))
        let tcx = try await HRMProcess.run(["export", path, "--format", "tcx", "--device", "tickr"])
        #expect(tcx.status == 0, "\(tcx.stderr)")
        #expect(tcx.stdout.contains("Recorded by hrm from TICKR 1A2B"))
    }
}

/// The pieces, in the process: the series per strap, picking a strap, a recording narrowed.
@Suite struct PerStrapUnitTests {
    @Test func seriesPerStrapAndAllTogether() {
        var series = RRSeries()
        series.add(RRLineRead(line: .skipped, device: "B", name: nil))
        series.add(RRLineRead(line: .intervals([800]), device: "A"))
        series.add(RRLineRead(line: .skipped, device: "A", name: "Strap A"))
        series.add(RRLineRead(line: .intervals([600]), device: "B"))
        series.add(RRLineRead(line: .gap, device: "A"))
        series.add(RRLineRead(line: .intervals([810]), device: "A"))
        series.add(RRLineRead(line: .intervals([610]), device: "B"))
        series.add(RRLineRead(line: .skipped, device: "A", name: "renamed"))
        #expect(series.straps.map(\.device) == ["B", "A"], "in the order first named")
        #expect(series.straps.map(\.name) == [nil, "Strap A"], "the first name")
        series.add(RRLineRead(line: .intervals([620]), device: "B"))
        series.add(RRLineRead(line: .gap))  // watch's last stopped: every strap's run ends
        series.add(RRLineRead(line: .intervals([630]), device: "B"))
        series.add(RRLineRead(line: .intervals([999])))  // a line of no strap
        series.endSource()
        #expect(series.straps.map(\.runs.runs) == [[[600, 610, 620], [630]], [[800], [810]], [[999]]])
        #expect(series.named.count == 2)
        #expect(series.all.runs == [[800, 600], [810, 610, 620], [630, 999]], "all together, as before")
    }

    @Test func csvRowsNameTheirDevice() throws {
        var parser = RRLineParser()
        _ = try parser.read("time,bpm,rr_ms,device")
        #expect(
            try parser.read("t,70,800 810,AA:BB")
                == RRLineRead(line: .intervals([800, 810]), device: "AA:BB"))
        #expect(try parser.read("t,70,800, ") == RRLineRead(line: .intervals([800])))
        _ = try parser.read("time,bpm,rr_ms")
        #expect(try parser.read("t,70,800") == RRLineRead(line: .intervals([800])))
    }

    @Test func pickingAStrap() {
        let straps = [
            StrapChoice.Strap(device: "C0:FF:EE:00:00:01", name: "HRM-Pro:123456"),
            StrapChoice.Strap(device: "C0:FF:EE:00:00:02", name: "TICKR 1A2B"),
            StrapChoice.Strap(device: "C0:FF:EE:00:00:03", name: nil),
        ]
        #expect(StrapChoice.pick("c0_ff_ee_00_00_02", among: straps) == .found(straps[1]))
        #expect(StrapChoice.pick("Tickr", among: straps) == .found(straps[1]))
        #expect(StrapChoice.pick("C0:FF:EE:00:00:04", among: straps) == .none)
        #expect(StrapChoice.pick("1", among: straps) == .several([straps[0], straps[1]]))
        #expect(StrapChoice.pick("polar", among: []) == .none)
        #expect(StrapChoice.label(straps[2]) == "C0:FF:EE:00:00:03")
        let many = StrapChoice.list(Array(repeating: straps[2], count: 25))
        #expect(many.split(separator: "\n").count == 21)
        #expect(many.hasSuffix("and 5 more"), "a file may name any number")
        #expect(StrapChoice.label(.init(device: "x\u{1b}[2J", name: "n\u{7}")).contains("\u{1b}") == false)
    }

    @Test func aRecordingNarrowedToOneStrap() throws {
        let lines = TwoStrapsRecording.lines(seconds: 70)
        let text = TwoStrapsRecording.text(lines)
        let whole = try RecordedSession(text: text, source: "two")
        #expect(whole.straps.map(\.device) == [TwoStrapsRecording.a, TwoStrapsRecording.b])
        #expect(whole.straps.map(\.name) == [TwoStrapsRecording.nameA, TwoStrapsRecording.nameB])
        #expect(whole.name == TwoStrapsRecording.nameA)
        let b = try RecordedSession(text: text, source: "two", only: TwoStrapsRecording.b)
        #expect(b.device == TwoStrapsRecording.b)
        #expect(b.name == TwoStrapsRecording.nameB)
        #expect(b.segments.count == 1, "A's drop is no gap of B's")
        #expect(b.measurements.count == 70)
        #expect(b.straps == whole.straps, "every strap still listed")
        let a = try RecordedSession(text: text, source: "two", only: TwoStrapsRecording.a)
        #expect(a.segments.count == 2)
    }
}
