internal import CDBus
internal import CDBusShims
internal import Glibc
import Synchronization
internal import Threads

/// The state behind a `Connection`. The connection's own event-loop thread (its isolation domain)
/// does all reading and dispatching and owns the loop-confined fields below; other threads reach
/// that state only through `execute(_:)`, which queues a job and wakes the loop through an eventfd.
/// Sending is the exception: libdbus's outgoing queue is thread-safe, so a message is queued from
/// the thread that produced it (`send`), in program order and without a thread hop; pending
/// calls live in the `calls` mutex so replies can be matched whichever thread sent the call. The
/// loop sleeps in poll(2) on the eventfd and libdbus's watch fds, with libdbus timeouts and call
/// deadlines turned into the poll timeout, so an idle connection costs no CPU.
///
/// Its jobs are spread over files: the poll loop (PollLoop.swift), sending and pending calls
/// (PendingCalls.swift), routing of what arrives (MessageRouting.swift), signal subscriptions
/// (Signals.swift) and exported objects (Export.swift and beside it).
final class Core: @unchecked Sendable {
    struct Inbox {
        var jobs: [@Sendable () -> Void] = []
        var sleeping = false
        var signalled = false
        var stopped = false
    }

    let connection: OpaquePointer
    let wakeFD: EventFD
    /// Jobs for the loop and whether it sleeps; shared by `execute` and the loop.
    let inbox = Mutex(Inbox())
    let isOpen = Atomic<Bool>(true)
    private let tokens = Atomic<UInt64>(1)
    /// Who waits in `waitUntilFinished`; nil once the loop has finished.
    let finished = Mutex<[CheckedContinuation<Void, Never>]?>([])
    /// Calls waiting for replies; shared by senders and the loop.
    let calls = Mutex(Calls())
    /// Whether unix fds can be passed: agreed during authentication, so set once Hello is answered.
    let canPassFDs = Atomic<Bool>(false)

    // Loop-confined state: only methods that call `assertOnLoopThread()` touch it.
    let threadID: pthread_t
    var watches: [OpaquePointer] = []
    var timeouts: [OpaquePointer: UInt64] = [:]
    var needsIteration = false
    var open = true
    var cache = SignatureCache()
    var closeReason = DBusError.closed
    // Signals (see Signals.swift) and exported objects (see ObjectTree.swift).
    var subscriptions: [UInt64: Subscription] = [:]
    var rules: [String: RuleState] = [:]
    var owners: [String: OwnerState] = [:]
    let objects = Mutex(ObjectTree())

    /// Created on the loop thread itself.
    init(connection: OpaquePointer, wakeFD: EventFD) {
        self.connection = connection
        self.wakeFD = wakeFD
        self.threadID = pthread_self()
    }

    var onLoopThread: Bool { pthread_equal(pthread_self(), threadID) != 0 }

    /// First line of every method that may only run on the loop thread: the loop-confined state
    /// has no lock, so touching it from elsewhere is a data race. `assert`, so release builds pay
    /// nothing.
    @inline(__always)
    func assertOnLoopThread(_ function: StaticString = #function) {
        assert(onLoopThread, "Core.\(function) runs only on the connection's loop thread")
    }

    /// Wakes the loop from another thread (no-op once it has stopped).
    func wakeLoop() {
        inbox.withLock { state in
            guard !state.stopped else { return }
            wakeFD.signal()
        }
    }

    func nextToken() -> UInt64 { tokens.wrappingAdd(1, ordering: .relaxed).oldValue }

    // MARK: Cross-thread entry

    /// Runs `job` on the loop thread, in order with every other job. Returns false if the loop has
    /// stopped (the job is then not run).
    @discardableResult
    func execute(_ job: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, wake) = inbox.withLock { state -> (Bool, Bool) in
            if state.stopped { return (false, false) }
            state.jobs.append(job)
            if state.sleeping && !state.signalled {
                state.signalled = true
                return (true, true)
            }
            return (true, false)
        }
        if wake { wakeFD.signal() }
        return accepted
    }

    /// Waits until the loop thread has finished and released the libdbus connection.
    func waitUntilFinished() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { waiters -> Bool in
                if waiters == nil { return true }
                waiters?.append(c)
                return false
            }
            if done { c.resume() }
        }
    }
}
