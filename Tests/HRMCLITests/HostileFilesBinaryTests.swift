import Foundation
import Testing

/// Files hrm and hrm-sim read but did not write: a line that never ends, a torn end of NUL
/// bytes (what a crash can leave on an SD card), FIFOs and devices where a recording should be,
/// an empty file, control characters. Each ends with a message and the right exit status, in
/// bounded memory and time; nothing hangs (each run is under `timeout`, whose 124 would say so).
@Suite struct HostileFilesBinaryTests {
    static let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim").path

    /// `hrm ARGUMENTS` (or `executable`) under `timeout`: a hang fails the test instead of holding it.
    static func run(
        _ arguments: [String], stdin: String? = nil, executable: String = HRMProcess.binary.path,
        environment: [String: String] = [:]
    ) async throws -> HRMProcess.Result {
        try await HRMProcess.run(
            ["120", executable] + arguments, stdin: stdin,
            executable: URL(fileURLWithPath: "/usr/bin/timeout"),
            environment: environment)
    }

    /// A shell script under `timeout` ($0 is hrm, $1 hrm-sim).
    static func shell(_ script: String, environment: [String: String] = [:]) async throws -> HRMProcess.Result
    {
        try await HRMProcess.run(
            ["120", "/bin/bash", "-c", script, HRMProcess.binary.path, sim],
            executable: URL(fileURLWithPath: "/usr/bin/timeout"), environment: environment)
    }

    /// A recording whose end is `nuls` NUL bytes (a sparse file: no disk used), after a torn line.
    static func recordingWithNULTail(in folder: URL, nuls: UInt64 = 50_000_000) throws -> String {
        let path = folder.appendingPathComponent("2026-11-23T15-42-01Z_D2-4B-7E-10-20-30.jsonl").path
        let text = ReplayBinaryTests.recording(ReplayBinaryTests.frames) + #"{"type":"measurement","ti"#
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(text.utf8.count) + nuls)
        try handle.close()
        return path
    }

    // MARK: A line that never ends

    @Test func hrvRefusesALineLongerThan64KiB() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("long.txt").path
        try ("800\n810\n" + String(repeating: "8", count: 1_000_000) + "\n").write(
            toFile: file, atomically: true, encoding: .utf8)
        let result = try await Self.run(["hrv", file])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("line 3: longer than 64 KiB"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// Standard input that never ends and has no newline: refused after 64 KiB, not read for ever.
    @Test func hrvOnEndlessNULsFromStandardInputStops() async throws {
        let result = try await Self.shell(#""$0" hrv < /dev/zero"#)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("line 1: longer than 64 KiB"), "\(result.stderr)")
    }

    @Test func decodeOnEndlessStandardInputStops() async throws {
        let result = try await Self.shell(#"yes 1 | tr -d '\n' | "$0" decode"#)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("line 1: longer than 64 KiB"), "\(result.stderr)")
    }

    // MARK: A torn end of NUL bytes

    @Test func exportOfARecordingWithANULTailKeepsWhatCameBefore() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = try Self.recordingWithNULTail(in: folder)
        let result = try await Self.run(["export", session, "--format", "csv"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("ends in 50000000 NUL bytes"), "\(result.stderr)")
        #expect(result.stdoutLines.count == ReplayBinaryTests.frames.count + 1)
    }

    @Test func sessionsListsARecordingWithANULTail() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sessions = folder.appendingPathComponent("hrm/sessions")
        try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        _ = try Self.recordingWithNULTail(in: sessions)
        let result = try await Self.run(["sessions", "--json"], environment: ["XDG_DATA_HOME": folder.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("NUL bytes"), "\(result.stderr)")
        let listed = WatchBinaryTests.lines(result.stdout)
        #expect(listed.count == 1)
        #expect(listed.first?["measurements"] as? Int == ReplayBinaryTests.frames.count)
    }

    @Test func replayOfARecordingWithANULTailPlaysWhatCameBefore() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = try Self.recordingWithNULTail(in: folder)
        let result = try await Self.run(["--replay", session, "--print-scenario"], executable: Self.sim)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("NUL bytes"), "\(result.stderr)")
        #expect(result.stdout.contains(#""frames""#))
    }

    // MARK: FIFOs, devices and links where a file should be

    @Test func sessionsSkipsWhatIsNotARegularFile() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sessions = folder.appendingPathComponent("hrm/sessions")
        try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        try ReplayBinaryTests.recording(ReplayBinaryTests.frames).write(
            to: sessions.appendingPathComponent("2026-11-23T15-42-01Z_D2-4B-7E-10-20-30.jsonl"),
            atomically: true, encoding: .utf8)
        #expect(mkfifo(sessions.appendingPathComponent("fifo.jsonl").path, 0o644) == 0)
        try FileManager.default.createSymbolicLink(
            atPath: sessions.appendingPathComponent("zero.jsonl").path, withDestinationPath: "/dev/zero")
        try FileManager.default.createDirectory(
            at: sessions.appendingPathComponent("folder.jsonl"), withIntermediateDirectories: true)
        let result = try await Self.run(["sessions", "--json"], environment: ["XDG_DATA_HOME": folder.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(WatchBinaryTests.lines(result.stdout).count == 1)
        #expect(result.stderr.contains("fifo.jsonl: not a regular file (a FIFO)"), "\(result.stderr)")
        #expect(
            result.stderr.contains("zero.jsonl: not a regular file (a character device)"), "\(result.stderr)")
        #expect(result.stderr.contains("folder.jsonl: not a regular file (a directory)"), "\(result.stderr)")
    }

    @Test func exportAndReplayRefuseAFIFO() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("session.jsonl").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let export = try await Self.run(["export", fifo, "--format", "csv"])
        #expect(export.status == 66, "\(export.stderr)")
        #expect(export.stderr.contains("not a regular file (a FIFO)"), "\(export.stderr)")
        let replay = try await Self.run(["--replay", fifo, "--print-scenario"], executable: Self.sim)
        #expect(replay.status == 66, "\(replay.stderr)")
        #expect(replay.stderr.contains("not a regular file (a FIFO)"), "\(replay.stderr)")
    }

    /// `hrm-sim --scenario PATH` reads a file it did not write too: a FIFO is refused, not waited on.
    @Test func aScenarioThatIsAFIFOIsRefused() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("world.json").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let result = try await Self.run(["--scenario", fifo, "--", "/bin/true"], executable: Self.sim)
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("not a regular file (a FIFO)"), "\(result.stderr)")
    }

    /// A device is refused by name; standard input stays a pipe hrv reads.
    @Test func hrvRefusesADeviceAndStillReadsAPipe() async throws {
        let zero = try await Self.run(["hrv", "/dev/zero"])
        #expect(zero.status == 66, "\(zero.stderr)")
        #expect(zero.stderr.contains("not a regular file (a character device)"), "\(zero.stderr)")
        let numbers = (0..<60).map { "\(800 + $0 % 7 * 10)\n" }.joined()
        let piped = try await Self.run(["hrv", "--json", "-"], stdin: numbers)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(WatchBinaryTests.lines(piped.stdout).first?["beats"] as? Int == 60)
    }

    // MARK: Empty files and control characters

    @Test func anEmptyFileIsNotARecording() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.jsonl").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let onlyNULs = folder.appendingPathComponent("nuls.jsonl").path
        #expect(FileManager.default.createFile(atPath: onlyNULs, contents: Data(count: 4096)))
        for file in [empty, onlyNULs] {
            let result = try await Self.run(["export", file, "--format", "tcx"])
            #expect(result.status == 65, "\(file): \(result.stderr)")
            #expect(result.stderr.contains("not an hrm recording"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// A file name in the sessions folder is anyone's: `hrm sessions` prints it escaped.
    @Test func sessionsEscapesAFileNamesControlCharacters() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sessions = folder.appendingPathComponent("hrm/sessions")
        try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        try ReplayBinaryTests.recording(ReplayBinaryTests.frames).write(
            to: sessions.appendingPathComponent("x\u{1B}]0;pwned\u{07}.jsonl"), atomically: true,
            encoding: .utf8)
        let result = try await Self.run(["sessions"], environment: ["XDG_DATA_HOME": folder.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{07}"), "\(result.stdout)")
        #expect(result.stdout.contains(#"x\e]0;pwned\a.jsonl"#), "\(result.stdout)")
    }

    /// A recording's text in hrm-sim's messages is escaped: its ESC and BEL never reach the terminal.
    @Test func replayEscapesControlCharactersFromTheFile() async throws {
        let folder = try RecordingBinaryTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bad.jsonl").path
        let lines = ReplayBinaryTests.recording(ReplayBinaryTests.frames).split(separator: "\n")
        let hostile =
            #"{"type":"status","time":"2026-11-23T15:42:01.125Z","mono_ms":5,"device":"\u001b]0;pwned\u0007","state":"x"}"#
        try ([String(lines[0]), hostile] + lines.dropFirst().map(String.init)).joined(separator: "\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await Self.run(["--replay", file, "--print-scenario"], executable: Self.sim)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("\u{07}"), "\(result.stderr)")
        #expect(result.stderr.contains(#"\e]0;pwned\a"#), "\(result.stderr)")
    }
}
