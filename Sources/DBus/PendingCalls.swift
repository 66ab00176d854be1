internal import CDBus
internal import CDBusShims
import Synchronization
internal import Threads

// Sending, and method calls waiting for replies: a call is registered under its serial before it
// is sent (from any thread), then completed exactly once by its reply, its deadline, cancellation
// or the connection closing.

extension Core {
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

    /// A waiting call. Its completion runs exactly once, on whichever thread finishes the call.
    struct Pending: @unchecked Sendable {
        var completion: Completion
        var token: UInt64
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
        if !canPassFDs.load(ordering: .acquiring) && dbus_message_contains_unix_fds(message.pointer) != 0 {
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
        assertOnLoopThread()
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

    // MARK: Replies, deadlines and closing (loop thread)

    /// Completes the call that `message` (a method return or an error) answers; a reply to a call
    /// that has already timed out or been cancelled is dropped.
    func completeCall(reply message: OpaquePointer) {
        assertOnLoopThread()
        let replySerial = dbus_message_get_reply_serial(message)
        let found = calls.withLock { state -> Pending? in
            guard let call = state.pending.removeValue(forKey: replySerial) else { return nil }
            state.serialsByToken[call.token] = nil
            // Deadlines are deleted lazily; drop them all when nothing is pending.
            if state.pending.isEmpty { state.deadlines.removeAll() }
            return call
        }
        guard let call = found else { return }
        do {
            let reply = try Message(message, cache: &cache)
            call.completion(reply.kind == .error ? .failure(reply.error) : .success(reply))
        } catch {
            call.completion(.failure(error))
        }
    }

    /// The earliest deadline of a waiting call (possibly of one already answered), for the poll
    /// timeout.
    func nextCallDeadline() -> UInt64? {
        calls.withLock { $0.deadlines.first?.deadline }
    }

    /// Fails every call whose deadline is at or before `now` with `.noReply`.
    func expireCalls(now: UInt64) {
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

    /// Refuses calls from now on with `reason` and returns the waiting ones, for the caller to fail
    /// once the libdbus connection is closed.
    func closeCalls(_ reason: DBusError) -> [Pending] {
        calls.withLock { state -> [Pending] in
            state.closed = reason
            defer {
                state.pending.removeAll()
                state.serialsByToken.removeAll()
                state.deadlines.removeAll()
            }
            return Array(state.pending.values)
        }
    }
}
