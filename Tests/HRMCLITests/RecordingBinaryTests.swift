import Foundation
import Testing

/// `watch --record` and `hrm record` as a user runs them, against hrm-sim: what the strap sent is
/// what the file keeps, a crash leaves a file `hrm hrv` reads, and a disk that cannot take it is
/// told (before connecting when it can be known) without ending the watch.
@Suite struct RecordingBinaryTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hrm-rec-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The payloads hrm-sim's log says it sent, in order.
    static func sent(_ log: String) throws -> [String] {
        WatchBinaryTests.lines(try String(contentsOfFile: log, encoding: .utf8)).filter {
            $0["event"] as? String == "notify" && $0["sent"] as? Bool == true
        }
        .compactMap { $0["hex"] as? String }
    }

    @Test(arguments: ["drops", "drops-nocache"])
    func everyNotificationIsRecordedInOrderAcrossADrop(scenario: String) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("session.jsonl").path
        let log = folder.appendingPathComponent("sim.jsonl").path
        let result = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--count", "12", "--record", file, "D2:4B:7E:10:20:32"], log: log)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("recorded"))
        let lines = WatchBinaryTests.lines(try String(contentsOfFile: file, encoding: .utf8))
        let header = try #require(lines.first)
        #expect(header["type"] as? String == "recording")
        #expect(header["format"] as? Int == 1)
        #expect(header["command"] as? String == "watch")
        let recorded = lines.compactMap {
            $0["type"] as? String == "measurement" ? $0["hex"] as? String : nil
        }
        // Every payload the strap sent, in order, until --count had its 12.
        #expect(recorded.count == 12)
        #expect(Array(try Self.sent(log).prefix(recorded.count)) == recorded)
        // The drop is in it, and the offsets only go forward.
        let states = lines.compactMap { $0["state"] as? String }
        #expect(states.contains("disconnected"))
        #expect(states.filter { $0 == "connected" }.count >= 2)
        #expect(states.last == "stopped")
        let offsets = lines.dropFirst().compactMap { $0["mono_ms"] as? Double }
        #expect(offsets.count == lines.count - 1)
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 })
        // What watch printed is what the file keeps, less the recording's own keys.
        let printed = WatchBinaryTests.lines(result.stdout).filter { $0["type"] as? String == "measurement" }
        #expect(
            printed.compactMap { $0["rr_1024"] as? [Int] }
                == lines.filter { $0["type"] as? String == "measurement" }.compactMap {
                    $0["rr_1024"] as? [Int]
                })
    }

    @Test func aKilledSessionLeavesARecordingHRVReads() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("killed.jsonl").path
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.runUnderSim(
            "basic", [],
            shell: """
                "\(hrm)" watch --json --duration 60 --record "\(file)" Polar > /dev/null 2>&1 &
                pid=$!
                # Killed once four measurements are on disk (however slow a loaded machine is).
                for i in $(seq 300); do
                    [ "$(grep -c '"type":"measurement"' "\(file)" 2>/dev/null)" -ge 4 ] && break
                    sleep 0.1
                done
                kill -9 $pid
                wait $pid
                # A torn last line, as a power cut mid-write leaves it.
                printf '{"type":"measurement","time":"2026-11-' >> "\(file)"
                "\(hrm)" hrv --json "\(file)"
                """)
        #expect(result.status == 0, "\(result.stderr)")
        let hrv = try #require(WatchBinaryTests.lines(result.stdout).first)
        #expect(hrv["type"] as? String == "hrv")
        #expect((hrv["beats"] as? Int ?? 0) >= 3)
        #expect(result.stderr.contains("torn last line"))
    }

    @Test(arguments: [
        ("existing", "exists already"), ("folder", "is a directory"),
        ("missing/x.jsonl", "folder does not exist"),
    ])
    func aPathThatCannotBeRecordedToIsToldBeforeConnecting(path: String, reason: String) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = FileManager.default.createFile(
            atPath: folder.appendingPathComponent("existing").path, contents: Data("old\n".utf8))
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("folder"), withIntermediateDirectories: true)
        let log = folder.appendingPathComponent("sim.jsonl").path
        let target = folder.appendingPathComponent(path).path
        let result = try await HRMProcess.runUnderSim(
            "basic", ["watch", "--json", "--count", "2", "--record", target, "Polar"], log: log)
        #expect(result.status == 73)
        #expect(result.stderr.contains(reason))
        #expect(WatchBinaryTests.lines(result.stdout).first?["code"] as? String == "recording_failed")
        #expect(try !WatchBinaryTests.calls(log).contains("Connect"))
        // An old file is never written over.
        #expect(
            try String(contentsOfFile: folder.appendingPathComponent("existing").path, encoding: .utf8)
                == "old\n")
    }

    /// An output opened after the recording cannot be (a broker that is not there): the run never
    /// starts, and the file made for it goes again, so that the same command can simply be run
    /// again once the broker is up (before, an empty file stayed and the rerun met "exists").
    @Test func aRunThatNeverStartsLeavesNoRecordingBehind() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("ride.jsonl").path
        // Port 1 on loopback: nothing listens there.
        let result = try await HRMProcess.runUnderSim(
            "basic", ["watch", "--count", "2", "--record", target, "--mqtt", "mqtt://127.0.0.1:1", "Polar"])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("MQTT"))
        #expect(!FileManager.default.fileExists(atPath: target), "the empty recording stayed behind")
    }

    /// A file-size limit stands in for a full disk: the recording stops with an error event, the
    /// watch goes on to its count, and the exit status (74, EX_IOERR) says that the recording
    /// asked for was not kept, for `watch --record PATH` and `hrm record` alike.
    @Test(arguments: [false, true]) func aDiskThatFailsStopsTheRecordingNotTheWatch(record: Bool) async throws
    {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("full.jsonl").path
        let command =
            record
            ? #"XDG_DATA_HOME="\#(folder.path)" exec "\#(HRMProcess.binary.path)" record --json --count 8 Polar"#
            : #"exec "\#(HRMProcess.binary.path)" watch --json --count 8 --record "\#(file)" Polar"#
        let result = try await HRMProcess.runUnderSim(
            "basic", [],
            shell: """
                # The limit holds for every file hrm writes, the test's output files too: hrm writes
                # into a pipe, which has none, and cat outside the limit copies it.
                set -o pipefail
                ( ulimit -f 2; \(command) 2>&1 ) | cat
                """)
        #expect(result.status == 74, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        #expect(events.filter { $0["type"] as? String == "measurement" }.count == 8)
        let failure = events.first { $0["code"] as? String == "recording_failed" }
        #expect((failure?["message"] as? String)?.contains("File too large") == true)
        #expect(events.last?["state"] as? String == "stopped")
        #expect(result.stdout.contains("the recording was not kept"), "\(result.stdout)")
    }

    @Test func recordKeepsSessionsInTheDataFolder() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await HRMProcess.runUnderSim(
            "basic", [],
            shell: """
                export XDG_DATA_HOME="\(folder.path)"
                "\(HRMProcess.binary.path)" record --count 3 Polar || exit $?
                # A second recording, then the list: newest first.
                sleep 1
                "\(HRMProcess.binary.path)" record --count 2 Polar > /dev/null || exit $?
                exec "\(HRMProcess.binary.path)" sessions --json
                """)
        #expect(result.status == 0, "\(result.stderr)")
        let sessions = folder.appendingPathComponent("hrm/sessions")
        let files = try FileManager.default.contentsOfDirectory(atPath: sessions.path).sorted()
        try #require(files.count == 2)
        let listed = WatchBinaryTests.lines(result.stdout).filter { $0["type"] as? String == "session" }
        #expect(listed.compactMap { $0["measurements"] as? Int } == [2, 3])
        #expect(
            listed.compactMap { $0["path"] as? String } == files.reversed().map { "\(sessions.path)/\($0)" })
        #expect(listed.first?["device"] as? String == "D2:4B:7E:10:20:30")
        #expect(listed.allSatisfy { ($0["max_bpm"] as? Int ?? 0) > 0 })
        #expect(files[0].hasSuffix("Z_D2-4B-7E-10-20-30.jsonl"))
        // The path at the start and at the end.
        #expect(result.stderr.contains("recording to \(sessions.path)/\(files[0])"))
        #expect(result.stderr.contains("to \(sessions.path)/\(files[0])"))
        let lines = WatchBinaryTests.lines(
            try String(contentsOfFile: sessions.appendingPathComponent(files[0]).path, encoding: .utf8))
        #expect(lines.first?["command"] as? String == "record")
        #expect(lines.filter { $0["type"] as? String == "measurement" }.count == 3)
    }

    /// The session's file name is taken when the strap is found (every name the next ten
    /// minutes could give is, here): the recording fails, watching goes on to its count, the
    /// file that was there is left alone, and the exit status is 74.
    @Test func aNameThatIsTakenFailsTheRecordingNotTheWatch() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sessions = folder.appendingPathComponent("hrm/sessions")
        try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime]
        let now = Date()
        for second in -5..<600 {
            let stamp = format.string(from: now.addingTimeInterval(Double(second)))
                .replacingOccurrences(of: ":", with: "-")
            try "someone else's\n".write(
                to: sessions.appendingPathComponent("\(stamp)_D2-4B-7E-10-20-30.jsonl"), atomically: false,
                encoding: .utf8)
        }
        let result = try await HRMProcess.runUnderSim(
            "basic", [],
            shell: """
                export XDG_DATA_HOME="\(folder.path)"
                exec "\(HRMProcess.binary.path)" record --json --count 3 Polar
                """)
        #expect(result.status == 74, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        #expect(events.filter { $0["type"] as? String == "measurement" }.count == 3)
        let failure = events.first { $0["code"] as? String == "recording_failed" }
        #expect((failure?["message"] as? String)?.contains("exists already") == true, "\(result.stdout)")
        #expect(result.stderr.contains("the recording was not kept"), "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: sessions.path)
        #expect(files.count == 605)
        for file in files {
            let text = try String(contentsOf: sessions.appendingPathComponent(file), encoding: .utf8)
            #expect(text == "someone else's\n", "\(file)")
        }
    }

    /// No strap found: nothing to keep, so no file (a service scanning for a strap nobody wears
    /// must not fill the folder with empty sessions), and the run says so.
    @Test func recordWithoutAStrapLeavesNoFile() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await HRMProcess.runUnderSim(
            "basic", [],
            shell: """
                export XDG_DATA_HOME="\(folder.path)"
                exec "\(HRMProcess.binary.path)" record --scan-timeout 1 suunto
                """)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("nothing recorded: no strap was found"), "\(result.stderr)")
        let sessions = folder.appendingPathComponent("hrm/sessions").path
        let files = (try? FileManager.default.contentsOfDirectory(atPath: sessions)) ?? []
        #expect(files.isEmpty, "\(files)")
    }

    /// A recording made by hrm, replayed by hrm-sim: watch prints the same measurements.
    @Test func aRecordingReplaysAsTheSameStream() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("session.jsonl").path
        let recorded = try await HRMProcess.runUnderSim(
            "drops", ["watch", "--json", "--count", "14", "--record", file, "D2:4B:7E:10:20:32"])
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim")
        let replayed = try await HRMProcess.run(
            [
                "--replay", file, "--speed", "4", "--", HRMProcess.binary.path, "watch", "--json", "--count",
                "14",
            ],
            executable: sim)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        func stream(_ output: String) -> [String] {
            WatchBinaryTests.lines(output).filter { $0["type"] as? String == "measurement" }.map {
                "\($0["bpm"] as? Int ?? -1) \($0["rr_1024"] as? [Int] ?? [])"
            }
        }
        #expect(stream(replayed.stdout).count == 14)
        #expect(stream(replayed.stdout) == stream(recorded.stdout))
        #expect(WatchBinaryTests.lines(replayed.stdout).contains { $0["state"] as? String == "disconnected" })
    }
}
