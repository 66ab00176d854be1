import Monitor
import Outputs
import SessionLibrary
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// What `StdoutSink` has for stdout, written in order by one writer at a time and never under
/// the pipeline's lock: `append` only queues bytes (quick, under the caller's lock); `flush`,
/// called after the lock, writes them.
///
/// Who writes: a thread of hrm's own (the strap's notification reader, `LoopThread.isCurrent`)
/// writes at once, itself, so that a notification still costs one wake-up; a task of Swift's pool
/// writes itself only what cannot wait (a pipe that poll(2) says has room, for PIPE_BUF bytes at
/// most, or a regular file), else hands the write to the writer's own thread (started then) and
/// returns, so that a stdout nobody reads never holds a pool thread. Whoever finds no write under
/// way writes everything queued, until nothing is; the others only queue.
///
/// A reader that stops taking output: what waits grows to `bound` bytes (beside the batch being
/// written), then whole appends are dropped and counted; the write that took `stallAfter` or
/// longer, or saw appends dropped, is reported to `stalled`. On a live display the stderr lines
/// that must come between stdout's bytes (a diagnostic with the live line taken off and drawn
/// again) queue here too, in order.
final class StdoutWriter: Sendable {
    /// A write that took long (the reader stopped taking output), and how many appends were
    /// dropped meanwhile (since the last report).
    struct Stall: Sendable, Equatable {
        let took: Duration
        let dropped: Int
    }

    /// Waiting at most: 1 MiB is over a minute of `--json` lines from one strap at 200
    /// notifications a second (about 120 bytes a line), hours at a strap's usual 1 Hz, 16 times a
    /// pipe's buffer: a reader that pauses (a pager, Ctrl-S, a slow consumer's hiccup) loses
    /// nothing; one that has stopped costs 1 MiB, not all the memory there is.
    static let defaultBound = 1 << 20

    /// Where a write from a task can be known not to wait.
    private enum Kind {
        /// A pipe or FIFO: no wait for PIPE_BUF bytes when poll(2) says it has room (Linux: a
        /// free page of its buffer).
        case pipe
        /// A regular file: a write waits for no reader.
        case file
        /// A terminal, a socket, anything else: its room cannot be known, so a task never writes.
        case other
    }

    private struct State: ~Copyable {
        var pending = OutputBytes()
        /// `pending`'s next buffer (emptied, its capacity kept): no allocation per line.
        var spare = OutputBytes()
        /// stderr lines to write once `pending` is written up to `at`.
        var errors: [(at: Int, line: [UInt8])] = []
        var errorBytes = 0
        var writing = false
        var dropped = 0
        var closed = false
        /// Told when nothing is queued and no write is under way (`finish`).
        var drained: [AsyncStream<Void>.Continuation] = []

        var isEmpty: Bool { pending.isEmpty && errors.isEmpty }
    }

    private let state = Mutex(State())
    private let fd: Int32
    private let errorFD: Int32
    private let bound: Int
    private let stallAfter: Duration
    private let worker: WorkerThread
    /// What stdout is, for a task that would write itself.
    private let kind: Kind
    private let stalled: @Sendable (Stall) -> Void
    private let closedByReader: @Sendable () -> Void

    /// `closed` is called once, when the reader has gone (EPIPE); later appends are dropped
    /// quietly. Any other failed write ends hrm (74), as a failed write to stdout always has.
    /// `stalled` and `closed` are called on the writing thread, under no lock: they may append.
    init(
        fd: Int32 = STDOUT_FILENO, errorFD: Int32 = STDERR_FILENO, bound: Int = defaultBound,
        stallAfter: Duration = .seconds(2), stalled: @escaping @Sendable (Stall) -> Void,
        closed: @escaping @Sendable () -> Void
    ) {
        self.fd = fd
        self.errorFD = errorFD
        self.bound = bound
        self.stallAfter = stallAfter
        self.stalled = stalled
        closedByReader = closed
        worker = WorkerThread(named: "hrm-stdout")
        var status = stat()
        let type = fstat(fd, &status) == 0 ? status.st_mode & S_IFMT : 0
        kind = type == S_IFIFO ? .pipe : type == S_IFREG ? .file : .other
    }

    /// The reader of stdout has gone.
    var closed: Bool { state.withLock { $0.closed } }

    /// Queues `text` (whole or, past the bound, not at all and counted). Returns false once the
    /// reader has gone.
    @discardableResult
    func append(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { append($0) }
    }

    /// Queues `bytes` as `append(_:)` queues a text.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            if state.pending.count + state.errorBytes + bytes.count > bound {
                state.dropped += 1
            } else {
                state.pending.append(bytes)
            }
            return true
        }
    }

    /// Queues `line` for stderr, after what is queued for stdout so far. False when it was not
    /// queued (the reader of stdout has gone): the caller writes it itself.
    func appendError(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        return state.withLock { state in
            guard !state.closed else { return false }
            if state.pending.count + state.errorBytes + bytes.count > bound {
                state.dropped += 1
            } else {
                state.errors.append((state.pending.count, bytes))
                state.errorBytes += bytes.count
            }
            return true
        }
    }

    /// Writes what is queued, unless a write is under way (its writer takes it): at once on a
    /// thread of hrm's own, else on the writer's thread. Call under no lock.
    func flush() {
        // hrm's own thread claims and takes under one lock; a task claims first, so that it
        // asks poll(2) about stdout's room only when it has something to write.
        guard !LoopThread.isCurrent else { return drain(onTask: false, claiming: true) }
        if state.withLock({ Self.claim(&$0) }) { drain(onTask: true, claiming: false) }
    }

    /// Makes the caller the writer, when there is something to write and no write under way.
    private static func claim(_ state: inout State) -> Bool {
        guard !state.writing, !state.isEmpty, !state.closed else { return false }
        state.writing = true
        return true
    }

    /// Writes what is queued and waits until it is written, `timeout` at most (a stdout nobody
    /// reads), then lets the writer's thread end.
    func finish(timeout: Duration) async {
        flush()
        let (done, finished) = AsyncStream.makeStream(of: Void.self)
        let idle = state.withLock { state -> Bool in
            guard state.writing || !state.isEmpty, !state.closed else { return true }
            state.drained.append(finished)
            return false
        }
        if !idle {
            // Detached: a session ends in a cancelled task, whose sleep would end at once.
            await Task.detached {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { for await _ in done {} }
                    group.addTask { try? await Task.sleep(for: timeout) }
                    await group.next()
                    group.cancelAll()
                }
            }.value
        }
        worker.stop()
    }

    /// The writer's loop: takes everything queued, writes it, until nothing is left. `onTask`:
    /// on Swift's pool, where only a write that cannot wait is made; the rest goes to the
    /// writer's thread, which takes the loop over. `claiming`: the caller is not the writer yet
    /// and becomes it only when no write is under way (`flush` on hrm's own thread).
    ///
    /// One lock per step: a notification's line is claimed and taken under one, and the next
    /// lock both reads what was dropped during the write and finds the queue empty.
    private func drain(onTask: Bool, claiming: Bool) {
        enum Step { case write, done, handOver, report(Stall) }
        var claiming = claiming
        var batch = OutputBytes()
        var errors: [(at: Int, line: [UInt8])] = []
        // The last write's duration, until the lock after it has read what was dropped meanwhile.
        var took: Duration? = nil
        while true {
            let room = onTask && hasRoom()
            let step = state.withLock { state -> Step in
                if claiming {
                    guard Self.claim(&state) else { return .done }
                    claiming = false
                }
                if let last = took {
                    took = nil
                    let dropped = state.dropped
                    state.dropped = 0
                    // Reported before anything else is taken, as the writer: what the report
                    // appends is written by this loop.
                    if last >= stallAfter || dropped > 0 {
                        return .report(Stall(took: last, dropped: dropped))
                    }
                }
                guard !state.isEmpty, !state.closed else {
                    state.writing = false
                    // Swapped, not assigned: no retain and release, once per notification.
                    if batch.capacity <= 64 * 1024 { swap(&state.spare, &batch) }
                    if !state.drained.isEmpty { Self.tellDrained(&state) }
                    return .done
                }
                if onTask
                    && !(room && state.errors.isEmpty && (kind == .file || state.pending.count <= PIPE_BUF))
                {
                    return .handOver
                }
                if batch.capacity == 0 { swap(&batch, &state.spare) }
                swap(&batch, &state.pending)
                swap(&errors, &state.errors)
                state.errorBytes = 0
                return .write
            }
            switch step {
            case .done: return
            case .handOver: return handOver()
            case .report(let stall):
                stalled(stall)
                continue
            case .write: break
            }
            let start = monotonicNanos()
            let failure = write(batch, errors)
            took = Duration.nanoseconds(Int64(clamping: monotonicNanos() &- start))
            batch.removeAll()
            if !errors.isEmpty { errors.removeAll(keepingCapacity: true) }
            if failure == EPIPE {
                return gone()
            } else if failure != 0 {
                StandardOutput.exitAfterWriteFailure(failure)
            }
        }
    }

    /// Tells whoever waits in `finish` that everything is written. Out of line, as the other
    /// steps a notification's write never takes, so that its code lies together (#29).
    @inline(never)
    private static func tellDrained(_ state: inout State) {
        for waiting in state.drained { waiting.finish() }
        state.drained = []
    }

    /// Gives the rest of the writing to the writer's thread.
    @inline(never)
    private func handOver() {
        worker.submit { [self] in drain(onTask: false, claiming: false) }
    }

    /// A write to stdout now would not wait (by `kind`): never known for a terminal or a socket.
    private func hasRoom() -> Bool {
        switch kind {
        case .file: return true
        case .other: return false
        case .pipe:
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLOUT) != 0
        }
    }

    /// stdout's bytes with the stderr lines at their places; 0 or the errno of stdout's write.
    private func write(_ batch: borrowing OutputBytes, _ errors: [(at: Int, line: [UInt8])]) -> Int32 {
        guard errors.isEmpty else { return write(batch, interleaving: errors) }
        return batch.withBytes(from: 0) { StandardOutput.writeAll(fd, $0) }
    }

    /// `write` with stderr lines among stdout's bytes (a live display's diagnostics).
    @inline(never)
    private func write(
        _ batch: borrowing OutputBytes, interleaving errors: [(at: Int, line: [UInt8])]
    ) -> Int32 {
        var from = 0
        for error in errors {
            let failure = batch.withBytes(from: from, upTo: error.at) { StandardOutput.writeAll(fd, $0) }
            if failure != 0 { return failure }
            from = error.at
            error.line.withUnsafeBufferPointer { _ = StandardOutput.writeAll(errorFD, $0) }
        }
        return batch.withBytes(from: from) { StandardOutput.writeAll(fd, $0) }
    }

    /// The reader went away: nothing more is written; the session is told once.
    private func gone() {
        state.withLock { state in
            state.closed = true
            state.writing = false
            state.pending.removeAll()
            state.errors = []
            state.errorBytes = 0
            for waiting in state.drained { waiting.finish() }
            state.drained = []
        }
        closedByReader()
    }
}
