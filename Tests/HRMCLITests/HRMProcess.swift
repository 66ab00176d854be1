import BrokerSupport
import Foundation
import Synchronization

/// Runs the built `hrm` binary as a user would, and captures what it prints.
struct HRMProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var stdoutLines: [String] {
            stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
    }

    /// `hrm` beside the test bundle (`.build/<config>/`), or `$HRM_BINARY`.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["HRM_BINARY"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("hrm")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/hrm")
    }

    /// `hrm ARGUMENTS` against hrm-sim playing `scenario` on a private bus.
    /// With `shell`, hrm-sim runs that bash script instead (pipes, two hrm at once).
    /// With `terminateWhen`, hrm-sim gets SIGTERM (and passes it on) once that says yes to what
    /// hrm printed so far, however long that took (`patience` at most).
    static func runUnderSim(
        _ scenario: String, _ arguments: [String], log: String? = nil, shell: String? = nil,
        environment: [String: String] = [:], patience: Duration = .seconds(20),
        terminateWhen ready: ((_ stdout: String) -> Bool)? = nil
    ) async throws -> Result {
        let sim = binary.deletingLastPathComponent().appendingPathComponent("hrm-sim").path
        var simArguments = ["--scenario", scenario]
        if let log { simArguments += ["--log", log] }
        let command = shell.map { ["/bin/bash", "-c", $0] } ?? [binary.path] + arguments
        return try await run(
            simArguments + ["--"] + command, executable: URL(fileURLWithPath: sim), environment: environment,
            patience: patience, terminateWhen: ready)
    }

    static func run(
        _ arguments: [String], stdin: String? = nil, executable: URL = binary,
        environment extra: [String: String] = [:], patience: Duration = .seconds(20),
        terminateWhen ready: ((_ stdout: String) -> Bool)? = nil
    ) async throws -> Result {
        // Output goes to files rather than pipes: nothing can block however much the child prints.
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hrm-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // hrm remembers the last device; tests keep that memory to themselves.
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory.path
        // Nor does the user's config file (~/.config/hrm/config.toml) reach a test.
        environment["XDG_CONFIG_HOME"] = directory.path
        environment["NO_COLOR"] = "1"
        environment.merge(extra) { $1 }
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        let exited = exit(of: process)
        try process.run()
        // A child that exits without reading all its input (a usage error, a line over the limit)
        // closes the pipe: the write then fails with EPIPE, which must not end the test process.
        signal(SIGPIPE, SIG_IGN)
        if let stdin { try? input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        if let ready {
            let limit = Date(timeIntervalSinceNow: patience.inSeconds)
            while Date() < limit, !ready((try? String(contentsOf: outURL, encoding: .utf8)) ?? "") {
                try await Task.sleep(for: .milliseconds(50))
            }
            process.terminate()
        }
        await exited.wait()
        return Result(
            status: process.terminationStatus,
            stdout: try String(contentsOf: outURL, encoding: .utf8),
            stderr: try String(contentsOf: errURL, encoding: .utf8))
    }

    /// Call before `process.run()`; `wait()` then returns once it has exited, without holding a
    /// thread: a test blocked in waitUntilExit holds one of the two threads Swift's cooperative
    /// pool has on a 2-core machine, and starves the in-process tests (and simulators) beside it.
    static func exit(of process: Process) -> Exit {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        process.terminationHandler = { _ in continuation.finish() }
        return Exit(stream: stream)
    }

    struct Exit {
        let stream: AsyncStream<Void>
        func wait() async { for await _ in stream {} }
    }
}

/// A run the test steers while it goes (pass `check` as `terminateWhen`): what hrm has printed so
/// far, and a stop the test gives once it has seen what it waited for, instead of a `--duration`
/// that a loaded machine may not fit the run into.
final class Steering: Sendable {
    private let state = Mutex((stdout: "", stopped: false))

    /// What hrm had printed when `check` last looked (every 50 ms).
    var stdout: String { state.withLock { $0.stdout } }

    /// hrm gets SIGTERM at the next look.
    func stop() { state.withLock { $0.stopped = true } }

    /// For `terminateWhen`: keeps what hrm printed, and says whether to stop.
    func check(_ stdout: String) -> Bool {
        state.withLock { state in
            state.stdout = stdout
            return state.stopped
        }
    }

    /// Until what hrm printed satisfies `condition` (a generous deadline only proves "not hung").
    func until(within limit: Duration = .seconds(60), _ condition: (String) -> Bool) async -> Bool {
        await eventually(within: limit) { condition(stdout) }
    }
}
