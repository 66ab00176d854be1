internal import CThreadShims
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process started with posix_spawn, with every signal unblocked and at its default.
///
/// Foundation's `Process` passes on the spawning thread's signal mask, and libdispatch's worker
/// threads block nearly every signal: a dbus-daemon or a COMMAND started from one of them would
/// ignore SIGTERM and SIGINT, so it could neither be stopped nor get a forwarded Ctrl-C.
public final class ChildProcess: Sendable {
    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: Int32
    /// The exit status once reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable` (a path, or a name looked up in PATH) with `arguments`.
    /// `environment` replaces the whole environment when given. `stdoutFD`, when given, becomes
    /// the child's standard output; `stderrFD` likewise for standard error; `stdinFD` for its
    /// standard input. `ownProcessGroup` puts the child in a process group of its own, out of
    /// reach of the terminal's Ctrl-C and hang-up (a helper its parent stops itself, such as
    /// hrm-sim's dbus-daemon).
    public init(
        executable: String, arguments: [String], environment: [String]? = nil, stdoutFD: Int32? = nil,
        stderrFD: Int32? = nil, stdinFD: Int32? = nil, ownProcessGroup: Bool = false
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinFD { posix_spawn_file_actions_adddup2(&actions, stdinFD, STDIN_FILENO) }
        if let stdoutFD { posix_spawn_file_actions_adddup2(&actions, stdoutFD, STDOUT_FILENO) }
        if let stderrFD { posix_spawn_file_actions_adddup2(&actions, stderrFD, STDERR_FILENO) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownProcessGroup {
            // Group 0: a new group, led by the child.
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envStrings = environment?.map { strdup($0) }
        defer { envStrings?.forEach { free($0) } }
        var pid: Int32 = 0
        let status: Int32
        if let envStrings {
            let envp = envStrings + [nil]
            status = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        } else {
            status = posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard status == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        self.pid = pid
    }

    /// Sends `signal` to the child, unless it has been reaped already.
    public func send(_ signal: Int32) {
        reaped.withLock { if $0 == nil { kill(pid, signal) } }
    }

    /// The exit status if the child has ended (reaping it), else nil. Never blocks.
    public func poll() -> Int32? {
        reaped.withLock { reaped in
            if let reaped { return reaped }
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { reaped = Self.exitCode(status) }
            return reaped
        }
    }

    /// Waits for the child to end, at most `timeout`; nil when it is still running then (or the
    /// task was cancelled). The wait is an event, not a poll: a thread of its own sleeps in
    /// poll(2) on the child's pidfd, so no thread of Swift's pool is held.
    public func wait(timeout: Duration) async -> Int32? {
        if let status = poll() { return status }
        guard let exit = ProcessExit(pid: pid) else { return await pollingWait(timeout: timeout) }
        defer { exit.close() }
        let waited = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                do throws(LoopThread.StartError) {
                    try LoopThread.start(named: "hrm-child-wait") {
                        exit.sleepUntilExit(timeout: timeout)
                        continuation.resume(returning: true)
                    }
                } catch {
                    continuation.resume(returning: false)
                }
            }
        } onCancel: {
            exit.interrupt()
        }
        // No thread to be had: the slow way, bounded all the same.
        return waited ? poll() : await pollingWait(timeout: timeout)
    }

    /// Blocks the calling thread until the child ends, at most `timeout`; for teardown paths
    /// that cannot be async (never on Swift's pool).
    public func waitBlocking(timeout: Duration) -> Int32? {
        if let status = poll() { return status }
        if let exit = ProcessExit(pid: pid) {
            exit.sleepUntilExit(timeout: timeout)
            exit.close()
            return poll()
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = poll() { return status }
            if ContinuousClock.now >= deadline { return nil }
            usleep(2000)
        }
    }

    /// Where pidfds are not to be had (Linux before 5.3): waitpid every few milliseconds.
    private func pollingWait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var delay = Duration.milliseconds(1)
        while true {
            if let status = poll() { return status }
            if ContinuousClock.now >= deadline || Task.isCancelled { return nil }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .milliseconds(50))
        }
    }

    /// This process's environment as `NAME=value` strings, for a child's with a few changes.
    public static var currentEnvironment: [String] {
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            entries.append(String(cString: entry))
            cursor += 1
        }
        return entries
    }

    /// SIGTERM, then SIGKILL if the child is still there after `grace`.
    public func terminate(grace: Duration = .seconds(2)) {
        send(SIGTERM)
        if waitBlocking(timeout: grace) == nil {
            send(SIGKILL)
            _ = waitBlocking(timeout: .seconds(5))
        }
    }

    /// As `terminate`, for a task: SIGTERM, then SIGKILL if the child is still there after
    /// `grace`, each wait an event on a thread of its own (`wait`), so that no thread of Swift's
    /// pool is held. Not cut short by the task's cancellation: the child is reaped all the same.
    public func stop(grace: Duration = .seconds(2)) async {
        send(SIGTERM)
        if await waitUncancelled(timeout: grace) == nil {
            send(SIGKILL)
            _ = await waitUncancelled(timeout: .seconds(5))
        }
    }

    /// `wait`, on a task of its own: the caller's cancellation must not end the wait early.
    private func waitUncancelled(timeout: Duration) async -> Int32? {
        await Task.detached { [self] in await wait(timeout: timeout) }.value
    }

    /// The shell's convention: the exit code, or 128 + the signal that ended the process.
    static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}

/// A child's pidfd, readable once it has ended, and an eventfd to give up the wait early.
private struct ProcessExit: Sendable {
    let process: Int32
    let wake: EventFD

    init?(pid: Int32) {
        let descriptor = hrm_pidfd_open(pid)
        guard descriptor >= 0 else { return nil }
        guard let wake = EventFD() else {
            _ = Glibc.close(descriptor)
            return nil
        }
        process = descriptor
        self.wake = wake
    }

    /// Sleeps until the child ended, `interrupt` was called, or `timeout` passed.
    func sleepUntilExit(timeout: Duration) {
        let deadline = monotonicNanos() &+ timeout.clampedNanoseconds
        while true {
            var fds = [
                pollfd(fd: process, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            let now = monotonicNanos()
            guard now < deadline else { return }
            let milliseconds = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            let result = poll(&fds, 2, milliseconds)
            if result > 0 || (result < 0 && errno != EINTR) { return }
        }
    }

    func interrupt() { wake.signal() }

    func close() {
        _ = Glibc.close(process)
        wake.close()
    }
}
