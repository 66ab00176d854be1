import DBus
import Foundation
import Synchronization
import Testing

/// A private dbus-daemon with its own session-like configuration, listening on a unix socket in a
/// temporary directory. Tests never touch the machine's buses.
final class TestBus: Sendable {
    let address: String
    let directory: URL
    private let pid: pid_t
    private let stopped = Mutex(false)

    init() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hrm-dbus-test-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory.path)/bus</listen>
              <auth>EXTERNAL</auth>
              <limit name="max_replies_per_connection">50000</limit>
              <limit name="max_match_rules_per_connection">50000</limit>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        let configURL = directory.appendingPathComponent("bus.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        // posix_spawn rather than Foundation.Process: Process.waitUntilExit can hang off the main thread.
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw DBusError(.connectionFailed, "pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = [
            "/usr/bin/dbus-daemon", "--config-file=\(configURL.path)", "--nofork", "--print-address=1",
            "--nopidfile",
        ]
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        // Threads of the test runner block signals; the daemon must not inherit that mask.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, &cArgs, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw DBusError(.connectionFailed, "cannot start dbus-daemon: \(rc)")
        }
        // The daemon prints its address once it is listening.
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fds[0], &byte, 1) == 1 && byte != 0x0A { line.append(byte) }
        close(fds[0])
        let text = String(decoding: line, as: UTF8.self)
        guard !text.isEmpty else {
            Foundation.kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw DBusError(.connectionFailed, "dbus-daemon did not start")
        }
        self.address = text
        self.directory = directory
        self.pid = pid
    }

    /// Kills the daemon at once (SIGKILL), as if the bus went away.
    func kill() {
        stop(SIGKILL)
    }

    private func stop(_ signal: Int32) {
        let alive = stopped.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard alive else { return }
        Foundation.kill(pid, signal)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    deinit {
        stop(SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    func connect() async throws -> Connection { try await Connection(address: address) }
}

/// Runs `body` with a fresh private bus.
func withBus<R>(_ body: (TestBus) async throws -> R) async throws -> R {
    let bus = try TestBus()
    return try await body(bus)
}

/// Spawns `argv` with stdout and stderr on pipes and an unblocked signal mask; returns the pid and
/// the read ends. posix_spawn rather than Foundation.Process, which leaks and can hang off the main thread.
func spawn(_ argv: [String], environment: [String: String] = [:]) throws -> (pid_t, Int32, Int32) {
    var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
    guard pipe(&out) == 0, pipe(&err) == 0 else { throw DBusError(.failed, "pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, out[1], 1)
    posix_spawn_file_actions_adddup2(&actions, err[1], 2)
    for fd in [out[0], out[1], err[0], err[1]] { posix_spawn_file_actions_addclose(&actions, fd) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    var cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in cArgs + cEnv { free(p) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, argv[0], &actions, &attributes, &cArgs, &cEnv)
    close(out[1])
    close(err[1])
    guard rc == 0 else {
        close(out[0])
        close(err[0])
        throw DBusError(.failed, "cannot start \(argv[0]): \(rc)")
    }
    return (pid, out[0], err[0])
}

private func readAll(_ fd: Int32) -> String {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { break }
        data += buffer[0..<n]
    }
    close(fd)
    return String(decoding: data, as: UTF8.self)
}

/// Runs a program to completion on a thread of its own (the cooperative pool is never blocked);
/// returns its exit status, stdout and stderr.
func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:]
) async throws -> (status: Int32, output: String, errors: String) {
    let (pid, out, err) = try spawn([executable] + arguments, environment: environment)
    return await withCheckedContinuation { continuation in
        let thread = Thread {
            let errors = Mutex("")
            let errThread = Thread { errors.withLock { $0 = readAll(err) } }
            errThread.start()
            let output = readAll(out)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            // stderr reaches EOF once the process has exited.
            while errThread.isExecuting || !errThread.isFinished { usleep(1000) }
            let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            continuation.resume(returning: (code, output, errors.withLock { $0 }))
        }
        thread.start()
    }
}

/// The next element of a stream, or nil if none arrives within `timeout`.
func next<T: Sendable>(_ stream: AsyncStream<T>, timeout: Duration = .seconds(5)) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// The durations of the Sleep calls the echo servers have begun: a test that gives its Sleep a
/// duration of its own knows when its call is in the server's hands.
let sleepsStarted = Mutex<Set<UInt32>>([])

/// Until the echo server has begun a Sleep of `ms` (30 s at most: only proves "not hung").
func untilSleeping(_ ms: UInt32) async -> Bool {
    await eventually { sleepsStarted.withLock { $0.contains(ms) } }
}

/// An echo interface: Echo returns its arguments unchanged, whatever they are.
let echoInterface = Interface(
    "org.example.Echo",
    methods: [
        Method("Echo", input: nil, output: nil) { call in call.body },
        Method("Sleep", input: "u", output: "") { call in
            let ms = try call.decode(UInt32.self)
            sleepsStarted.withLock { _ = $0.insert(ms) }
            try await Task.sleep(for: .milliseconds(Int(ms)))
            return []
        },
        Method("Fail", input: "ss", output: "") { call in
            let (name, message) = try call.decode(String.self, String.self)
            throw DBusError(name: try ErrorName(name), message: message)
        },
    ])

/// A server connection that owns `org.example.Test` and exports the echo object at /echo.
func startEchoServer(_ bus: TestBus) async throws -> Connection {
    let server = try await bus.connect()
    try server.export(echoInterface, at: "/echo")
    let result = try await server.requestName("org.example.Test")
    #expect(result == .primaryOwner)
    return server
}

/// The DBusError `body` throws, or nil (recording an issue) if it throws nothing or something else.
func dbusError<R>(
    _ body: () async throws -> R, sourceLocation: SourceLocation = #_sourceLocation
) async -> DBusError? {
    do {
        _ = try await body()
        Issue.record("expected a DBusError, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as DBusError {
        return error
    } catch {
        Issue.record("expected a DBusError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
