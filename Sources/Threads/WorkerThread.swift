internal import Glibc
import Synchronization

/// A thread of its own for blocking calls (a write that may wait for its reader, fsync), so that
/// none of them holds a thread of Swift's cooperative pool: work submitted runs there one at a
/// time, in the order submitted, as on NIO's `NIOThreadPool` with one thread.
///
/// The thread is started with the first work (so an owner that never needs it costs nothing) and
/// sleeps in poll(2) on an eventfd between works; `stop` lets it end once nothing waits. Work
/// submitted after that starts a new one. When no thread can be had (the process is out of threads
/// or descriptors) the work runs on the caller's thread instead: late, never lost.
public final class WorkerThread: Sendable {
    private struct State {
        var work: [@Sendable () -> Void] = []
        /// The thread's eventfd while it runs; nil when there is no thread.
        var wake: EventFD? = nil
        /// The thread sleeps in poll(2), or is about to: the next work must signal it.
        var sleeping = false
        /// The thread ends once nothing waits.
        var stopping = false
    }

    private let state = Mutex(State())
    private let name: String

    /// A worker whose thread, once started, is called `name` (15 bytes are kept).
    public init(named name: String) {
        self.name = name
    }

    /// Runs `work` on the worker's thread, after the work submitted before it; returns at once.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        enum Next { case nothing, signal(EventFD), start(EventFD), inline }
        let next = state.withLock { state -> Next in
            state.work.append(work)
            if let wake = state.wake {
                guard state.sleeping else { return .nothing }
                state.sleeping = false
                return .signal(wake)
            }
            guard let wake = EventFD() else {
                state.work.removeLast()
                return .inline
            }
            state.wake = wake
            state.stopping = false
            return .start(wake)
        }
        switch next {
        case .nothing: return
        case .signal(let wake): wake.signal()
        case .inline: work()
        case .start(let wake):
            do throws(LoopThread.StartError) {
                try LoopThread.start(named: name) { [self] in loop(wake) }
            } catch {
                // No thread: what was queued for it runs here, in order.
                let queued = state.withLock { state -> [@Sendable () -> Void] in
                    state.wake = nil
                    defer { state.work = [] }
                    return state.work
                }
                wake.close()
                for work in queued { work() }
            }
        }
    }

    /// Runs `body` on the worker's thread and returns its result: the calling task is suspended
    /// meanwhile, its thread free for other tasks. The body runs to its end even when the task
    /// is cancelled (a blocking call cannot be taken back).
    public func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T)
        async throws(Failure) -> T
    {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            submit { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }

    /// Lets the thread end once the work submitted so far has run. Returns at once.
    public func stop() {
        let wake = state.withLock { state -> EventFD? in
            guard let wake = state.wake else { return nil }
            state.stopping = true
            guard state.sleeping else { return nil }
            state.sleeping = false
            return wake
        }
        wake?.signal()
    }

    /// The thread: runs what waits, sleeps until more comes, ends when told to and nothing waits.
    private func loop(_ wake: EventFD) {
        while true {
            let taken = state.withLock { state -> [@Sendable () -> Void]? in
                if !state.work.isEmpty {
                    defer { state.work.removeAll(keepingCapacity: true) }
                    return state.work
                }
                if state.stopping {
                    state.wake = nil
                    state.stopping = false
                    return nil
                }
                state.sleeping = true
                return []
            }
            guard let taken else { return wake.close() }
            if taken.isEmpty {
                Self.sleep(on: wake)
                continue
            }
            for work in taken { work() }
        }
    }

    /// Sleeps until `wake` is signalled (and resets it): woken only by new work or `stop`.
    private static func sleep(on wake: EventFD) {
        var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, -1) < 0 && errno == EINTR {}
        wake.drain()
    }
}
