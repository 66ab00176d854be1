internal import CDBus
internal import CDBusShims
internal import Glibc
import Synchronization

/// The state behind a `Connection`. The connection's own event-loop thread (its isolation domain)
/// does all reading and dispatching and owns the loop-confined fields below; other threads reach
/// that state only through `execute(_:)`, which queues a job and wakes the loop through an eventfd.
/// Sending is the exception: libdbus's outgoing queue is thread-safe, so a message is queued from
/// the thread that produced it (`sendNow`), in program order and without a thread hop; pending
/// calls live in the `calls` mutex so replies can be matched whichever thread sent the call. The
/// loop sleeps in poll(2) on the eventfd and libdbus's watch fds, with libdbus timeouts and call
/// deadlines turned into the poll timeout, so an idle connection costs no CPU.
final class Core: @unchecked Sendable {
    typealias Completion = (Result<Message, DBusError>) -> Void

    /// Calls waiting for replies; shared by senders and the loop.
    struct Calls {
        var pending: [UInt32: Pending] = [:]
        var serialsByToken: [UInt64: UInt32] = [:]
        var cancelledTokens: Set<UInt64> = []
        var deadlines = DeadlineHeap()
        var closed: DBusError? = nil
        /// Serials for our method calls (set before sending, so the reply can be registered first).
        var nextSerial: UInt32 = 1 << 20
    }

    struct Inbox {
        var jobs: [@Sendable () -> Void] = []
        var sleeping = false
        var signalled = false
        var stopped = false
    }

    /// A waiting call. Its completion runs exactly once, on whichever thread finishes the call.
    struct Pending: @unchecked Sendable {
        var completion: Completion
        var token: UInt64
    }

    let connection: OpaquePointer
    let wakeFD: Int32
    private let inbox = Mutex(Inbox())
    let isOpen = Atomic<Bool>(true)
    private let tokens = Atomic<UInt64>(1)
    private let finished = Mutex<[CheckedContinuation<Void, Never>]?>([])
    let calls = Mutex(Calls())
    let canPassFDs: Bool

    // Loop-confined state.
    let threadID: pthread_t
    var watches: [OpaquePointer] = []
    var timeouts: [OpaquePointer: UInt64] = [:]
    var needsIteration = false
    var open = true
    var cache = SignatureCache()
    var closeReason = DBusError.closed
    // Signals (see Signals.swift) and exported objects (see Export.swift).
    var subscriptions: [UInt64: Subscription] = [:]
    var rules: [String: RuleState] = [:]
    var owners: [String: OwnerState] = [:]
    let objects = Mutex(ObjectTree())

    /// Created on the loop thread itself.
    init(connection: OpaquePointer, wakeFD: Int32) {
        self.connection = connection
        self.wakeFD = wakeFD
        self.threadID = pthread_self()
        self.canPassFDs = dbus_connection_can_send_type(connection, Int32(CDBUS_TYPE_UNIX_FD)) != 0
    }

    var onLoopThread: Bool { pthread_equal(pthread_self(), threadID) != 0 }

    /// Wakes the loop from another thread (no-op once it has stopped).
    func wakeLoop() {
        inbox.withLock { state in
            guard !state.stopped else { return }
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
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
        if wake {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
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

    // MARK: The loop

    func run() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            connection,
            { watch, data in
                guard let watch, let data else { return 0 }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().watches.append(watch)
                return 1
            },
            { watch, data in
                guard let watch, let data else { return }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().watches.removeAll { $0 == watch }
            },
            { _, _ in },  // enabled state is read before every poll
            me, nil)
        dbus_connection_set_timeout_functions(
            connection,
            { timeout, data in
                guard let timeout, let data else { return 0 }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().armTimeout(timeout)
                return 1
            },
            { timeout, data in
                guard let timeout, let data else { return }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().timeouts[timeout] = nil
            },
            { timeout, data in
                guard let timeout, let data else { return }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().armTimeout(timeout)
            },
            me, nil)
        // libdbus asks for a wake-up after queueing outgoing data it could not write at once: on the
        // loop thread a flag that skips the next sleep is enough, from elsewhere the eventfd.
        dbus_connection_set_wakeup_main_function(
            connection,
            { data in
                guard let data else { return }
                let core = Unmanaged<Core>.fromOpaque(data).takeUnretainedValue()
                if core.onLoopThread { core.needsIteration = true } else { core.wakeLoop() }
            }, me, nil)
        dbus_connection_add_filter(
            connection,
            { _, message, data in
                guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
                return Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().handle(message)
            }, me, nil)

        var pollFDs: [pollfd] = []
        var polled: [OpaquePointer] = []
        while open {
            runJobs()
            dispatchAll()
            if !open { break }
            if dbus_connection_get_is_connected(connection) == 0 {
                // The Disconnected message is queued by libdbus; dispatch it once more.
                dispatchAll()
                if open { shutdown(DBusError(.disconnected, "the bus closed the connection")) }
                break
            }

            pollFDs.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
                if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
                pollFDs.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polled.append(watch)
            }
            var timeoutMs = pollTimeout()
            let mayBlock = inbox.withLock { state -> Bool in
                if !state.jobs.isEmpty { return false }
                state.sleeping = true
                return true
            }
            if !mayBlock || needsIteration { timeoutMs = 0 }
            needsIteration = false
            let n = poll(&pollFDs, nfds_t(pollFDs.count), timeoutMs)
            inbox.withLock {
                $0.sleeping = false
                $0.signalled = false
            }
            if n > 0 {
                if pollFDs[0].revents != 0 {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                }
                for (i, watch) in polled.enumerated() {
                    let revents = pollFDs[i + 1].revents
                    guard revents != 0, watches.contains(watch) else { continue }
                    var flags: UInt32 = 0
                    if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
                    if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
                    if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
                    if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
                    dbus_watch_handle(watch, flags)
                }
            }
            fireTimeouts()
        }
        teardown()
    }

    private func runJobs() {
        while true {
            let jobs = inbox.withLock { state -> [@Sendable () -> Void] in
                let jobs = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                return jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { job() }
        }
    }

    private func dispatchAll() {
        while dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
            dbus_connection_dispatch(connection)
        }
    }

    private func armTimeout(_ timeout: OpaquePointer) {
        if dbus_timeout_get_enabled(timeout) != 0 {
            timeouts[timeout] =
                monotonicNanos() + UInt64(max(0, dbus_timeout_get_interval(timeout))) * 1_000_000
        } else {
            timeouts[timeout] = nil
        }
    }

    private func pollTimeout() -> Int32 {
        var next = UInt64.max
        for (_, deadline) in timeouts { next = min(next, deadline) }
        if let first = calls.withLock({ $0.deadlines.first }) { next = min(next, first.deadline) }
        if next == .max { return -1 }
        let now = monotonicNanos()
        if next <= now { return 0 }
        // Round up so we never wake just before a deadline.
        return Int32(min((next - now + 999_999) / 1_000_000, 86_400_000))
    }

    private func fireTimeouts() {
        let now = monotonicNanos()
        for (timeout, deadline) in timeouts where deadline <= now {
            guard timeouts[timeout] != nil else { continue }
            armTimeout(timeout)
            dbus_timeout_handle(timeout)
        }
        let expired = calls.withLock { state -> [Pending] in
            var expired: [Pending] = []
            while let first = state.deadlines.first, first.deadline <= now {
                _ = state.deadlines.popFirst()
                if let call = state.pending.removeValue(forKey: first.key) {
                    state.serialsByToken[call.token] = nil
                    expired.append(call)
                }
            }
            return expired
        }
        for call in expired {
            call.completion(.failure(DBusError(.noReply, "no reply within the call's timeout")))
        }
    }

    /// Fails everything in flight, finishes every stream and closes the libdbus connection.
    func shutdown(_ reason: DBusError) {
        guard open else { return }
        open = false
        closeReason = reason
        isOpen.store(false, ordering: .releasing)
        let waiting = calls.withLock { state -> [Pending] in
            state.closed = reason
            defer {
                state.pending.removeAll()
                state.serialsByToken.removeAll()
                state.deadlines.removeAll()
            }
            return Array(state.pending.values)
        }
        dbus_connection_close(connection)
        for call in waiting { call.completion(.failure(reason)) }
        finishAllSubscriptions()
        objects.withLock { $0 = ObjectTree() }
    }

    private func teardown() {
        // Jobs queued after the loop stopped still run, so every waiter gets its answer.
        inbox.withLock { $0.stopped = true }
        runJobs()
        dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_wakeup_main_function(connection, nil, nil, nil)
        // Drain whatever libdbus still has queued so its messages are released.
        dispatchAllAfterClose()
        dbus_connection_unref(connection)
        Glibc.close(wakeFD)
        let waiters = finished.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    private func dispatchAllAfterClose() {
        while let message = dbus_connection_pop_message(connection) { dbus_message_unref(message) }
    }

    // MARK: Sending

    /// Runs `body` with the libdbus connection kept alive (referenced) even if the loop closes it
    /// meanwhile; throws the close reason if it is already closed.
    private func withLiveConnection<R>(_ body: (OpaquePointer) -> R) throws(DBusError) -> R {
        let closed = calls.withLock { state -> DBusError? in
            if let closed = state.closed { return closed }
            dbus_connection_ref(connection)
            return nil
        }
        if let closed { throw closed }
        defer { dbus_connection_unref(connection) }
        return body(connection)
    }

    private func checkFDs(_ message: OwnedMessage) throws(DBusError) {
        if !canPassFDs && dbus_message_contains_unix_fds(message.pointer) != 0 {
            throw DBusError(.notSupported, "this connection cannot pass unix fds")
        }
    }

    /// Queues a message for sending, from any thread; messages queued by one thread go out in
    /// the order they were queued.
    func send(_ message: OwnedMessage) throws(DBusError) {
        try checkFDs(message)
        let ok = try withLiveConnection { dbus_connection_send($0, message.pointer, nil) != 0 }
        guard ok else { throw DBusError(.noMemory, "out of memory sending a message") }
    }

    /// Sends a method call and registers `completion` for its reply, from any thread. The
    /// completion runs on the loop thread (or here if the call fails at once).
    func startCall(_ message: OwnedMessage, timeout: UInt64, token: UInt64, completion: @escaping Completion)
    {
        do {
            try checkFDs(message)
        } catch {
            completion(.failure(error))
            return
        }
        let now = monotonicNanos()
        let deadline = timeout > UInt64.max - now ? UInt64.max : now + timeout
        enum Outcome {
            case failed(DBusError)
            case registered(UInt32, wake: Bool)
        }
        let entry = Pending(completion: completion, token: token)
        let outcome = calls.withLock { state -> Outcome in
            if let closed = state.closed { return .failed(closed) }
            if state.cancelledTokens.remove(token) != nil {
                return .failed(DBusError(.cancelled, "the call was cancelled"))
            }
            let serial = state.nextSerial
            state.nextSerial = state.nextSerial == UInt32.max ? 1 << 20 : state.nextSerial + 1
            state.pending[serial] = entry
            state.serialsByToken[token] = serial
            let wake = state.deadlines.first.map { deadline < $0.deadline } ?? true
            state.deadlines.insert(deadline, serial)
            dbus_connection_ref(connection)
            return .registered(serial, wake: wake)
        }
        guard case .registered(let serial, let wake) = outcome else {
            if case .failed(let error) = outcome { completion(.failure(error)) }
            return
        }
        dbus_message_set_serial(message.pointer, serial)
        let sent = dbus_connection_send(connection, message.pointer, nil) != 0
        dbus_connection_unref(connection)
        if !sent {
            let call = calls.withLock { state -> Pending? in
                guard let call = state.pending.removeValue(forKey: serial) else { return nil }
                state.serialsByToken[call.token] = nil
                return call
            }
            call?.completion(.failure(DBusError(.noMemory, "out of memory sending a message")))
            return
        }
        // A deadline earlier than the loop's current poll timeout needs the loop to look again.
        if wake && !onLoopThread { wakeLoop() }
    }

    /// Cancels a call (any thread); a call not started yet is refused when it starts.
    func cancelCall(token: UInt64) {
        let call = calls.withLock { state -> Pending? in
            guard let serial = state.serialsByToken.removeValue(forKey: token) else {
                state.cancelledTokens.insert(token)
                return nil
            }
            return state.pending.removeValue(forKey: serial)
        }
        call?.completion(.failure(DBusError(.cancelled, "the call was cancelled")))
    }

    /// Loop-thread helper: a call whose reply is handled on the loop thread.
    func callOnLoop(
        destination: BusName?, path: ObjectPath, interface: InterfaceName, member: MemberName,
        body: [Value], timeout: Duration = .seconds(25), completion: @escaping Completion
    ) {
        do {
            let message = try Connection.makeCall(
                destination: destination, path: path, interface: interface, member: member, body: body,
                noReply: false, autoStart: true, interactive: false)
            startCall(
                message, timeout: timeout.clampedNanoseconds, token: nextToken(), completion: completion)
        } catch {
            completion(.failure(error))
        }
    }

    // MARK: Receiving

    private func handle(_ message: OpaquePointer) -> DBusHandlerResult {
        switch Int32(dbus_message_get_type(message)) {
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_RETURN), Int32(CDBUS_MESSAGE_TYPE_ERROR):
            let replySerial = dbus_message_get_reply_serial(message)
            let found = calls.withLock { state -> Pending? in
                guard let call = state.pending.removeValue(forKey: replySerial) else { return nil }
                state.serialsByToken[call.token] = nil
                // Deadlines are deleted lazily; drop them all when nothing is pending.
                if state.pending.isEmpty { state.deadlines.removeAll() }
                return call
            }
            guard let call = found else { return DBUS_HANDLER_RESULT_HANDLED }
            do {
                let reply = try Message(message, cache: &cache)
                call.completion(reply.kind == .error ? .failure(reply.error) : .success(reply))
            } catch {
                call.completion(.failure(error))
            }
            return DBUS_HANDLER_RESULT_HANDLED
        case Int32(CDBUS_MESSAGE_TYPE_SIGNAL):
            if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                shutdown(DBusError(.disconnected, "the bus closed the connection"))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            dispatchSignal(message)
            return DBUS_HANDLER_RESULT_HANDLED
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_CALL):
            dispatchMethodCall(message)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }
}
