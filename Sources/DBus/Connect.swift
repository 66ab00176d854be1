internal import CDBus
internal import CDBusShims
internal import Glibc
import Synchronization
internal import Threads

// Connecting to a bus, with a deadline and cancellation. libdbus's own way, `dbus_bus_register`,
// blocks in `dbus_connection_send_with_reply_and_block` until the SASL handshake and Hello are done,
// holding a process-wide lock (every other dbus_bus_register or dbus_bus_get_unique_name waits),
// and its reply timeout does not cover the handshake: against a socket that accepts and never
// answers it was still blocked after five minutes, and so was the task waiting for it, whatever
// signal came. So only the socket is opened the blocking way (`dbus_connection_open_private`:
// connect(2) and the first bytes of the handshake, queued), and the rest runs as any other
// traffic does: the connection's loop thread drives the handshake through its poll loop, Hello is
// an ordinary pending call, and the unique name is handed to libdbus with
// `dbus_bus_set_unique_name`, the asynchronous registration its documentation describes. Hello's
// deadline (the attempt's) is kept by the loop like any call's, and cancellation only has to stop
// the loop; either closes the socket.
//
// What cannot be interrupted is connect(2) itself inside `dbus_connection_open_private` (and, for
// tcp: addresses, the name lookup before it). An AF_UNIX connect blocks only while the listener's
// accept queue is full; a tcp connect until the peer answers or the kernel gives up (about two
// minutes by default). If the deadline or a cancellation comes first, the caller gets its error at
// once, and the thread blocked in connect(2) stays until connect(2) returns; then it closes the
// socket and its eventfd and ends. Nothing else outlives a failed attempt.

/// One attempt to connect, shared by the task waiting for it, the thread opening the socket (then
/// the connection's loop), the deadline and cancellation. It finishes exactly once: whoever comes
/// first decides the outcome, and what comes later only cleans up.
final class ConnectAttempt: Sendable {
    typealias Outcome = Result<(Core, String), DBusError>

    enum Phase {
        /// The thread is in `dbus_connection_open_private`.
        case opening
        /// The loop runs: authentication and Hello.
        case registering(Core)
        case finished
    }

    private struct State {
        var phase = Phase.opening
        var outcome: Outcome?
        var waiter: CheckedContinuation<Outcome, Never>?
    }

    let address: String
    let timeout: Duration
    /// When the attempt gives up (monotonic nanoseconds).
    let deadline: UInt64
    private let state = Mutex(State())

    init(address: String, timeout: Duration) {
        self.address = address
        self.timeout = timeout
        let now = monotonicNanos()
        let nanos = timeout.clampedNanoseconds
        deadline = nanos > UInt64.max - now ? UInt64.max : now + nanos
    }

    /// The error for a deadline that passed; `step` is what the bus did not do in time.
    func timedOut(_ step: String) -> DBusError {
        DBusError(.connectionFailed, "the bus at \(address) \(step) within \(timeout.shortText)")
    }

    /// Waits for the outcome (at once if there is one already).
    func outcome() async -> Outcome {
        await withCheckedContinuation { (c: CheckedContinuation<Outcome, Never>) in
            let ready = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiter = c
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }

    /// Settles the attempt; false if it was settled already (the caller then cleans up).
    @discardableResult
    func finish(_ outcome: Outcome) -> Bool { settle(outcome) != nil }

    /// Settles the attempt if `condition` accepts the phase it is in, and returns that phase (nil
    /// if it did not settle it). The phase only moves forward: opening, registering, finished.
    private func settle(_ outcome: Outcome, when condition: (Phase) -> Bool = { _ in true }) -> Phase? {
        let (replaced, waiter) = state.withLock { state -> (Phase?, CheckedContinuation<Outcome, Never>?) in
            if case .finished = state.phase { return (nil, nil) }
            guard condition(state.phase) else { return (nil, nil) }
            let replaced = state.phase
            state.phase = .finished
            state.outcome = outcome
            defer { state.waiter = nil }
            return (replaced, state.waiter)
        }
        waiter?.resume(returning: outcome)
        return replaced
    }

    /// The socket is open and `core` about to run; false if the attempt was given up meanwhile.
    func opened(_ core: Core) -> Bool {
        state.withLock { state -> Bool in
            guard case .opening = state.phase else { return false }
            state.phase = .registering(core)
            return true
        }
    }

    /// The calling task was cancelled: the caller gets `.cancelled` now, without waiting for
    /// libdbus; the loop (if it runs yet) is told to close the connection.
    func cancel() {
        let replaced = settle(
            .failure(DBusError(.cancelled, "connecting to the bus at \(address) was cancelled")))
        if case .registering(let core)? = replaced {
            core.execute { core.shutdown(DBusError.closed) }
        }
    }

    /// The deadline passed while the socket was still connecting (connect(2) blocked): the caller
    /// gets its error now. Once the loop runs, the deadline is the loop's (Hello's deadline), which
    /// needs no thread of Swift's pool to pass on time.
    func expire() {
        _ = settle(
            .failure(timedOut("did not accept the connection")),
            when: { if case .opening = $0 { true } else { false } })
    }
}

extension Core {
    /// Sends Hello (loop thread, before the loop runs): libdbus holds it until the handshake is
    /// done. Its reply settles `attempt`, and so does its deadline, the attempt's: then what did not
    /// happen in time is the handshake, or the answer to Hello.
    func register(_ attempt: ConnectAttempt) {
        assertOnLoopThread()
        let hello: OwnedMessage
        do {
            hello = try Connection.makeCall(
                destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "Hello", body: [],
                noReply: false, autoStart: true, interactive: false)
        } catch {
            attempt.finish(.failure(error))
            shutdown(DBusError.closed)
            return
        }
        let now = monotonicNanos()
        let remaining = attempt.deadline > now ? attempt.deadline - now : 0
        startCall(hello, timeout: remaining, token: nextToken()) { [self] result in
            assertOnLoopThread()
            let address = attempt.address
            switch result {
            case .success(let reply):
                guard let name = try? reply.decode(String.self), (try? BusName(name))?.isUnique == true else {
                    attempt.finish(
                        .failure(
                            DBusError(
                                .connectionFailed,
                                "the bus at \(address) answered Hello with '\(reply.signature)', not a unique name"
                            )))
                    shutdown(DBusError.closed)
                    return
                }
                // Fd passing is agreed during the handshake, which is over once Hello is answered.
                canPassFDs.store(
                    dbus_connection_can_send_type(connection, Int32(CDBUS_TYPE_UNIX_FD)) != 0,
                    ordering: .releasing)
                guard dbus_bus_set_unique_name(connection, name) != 0 else {
                    attempt.finish(.failure(DBusError(.noMemory, "out of memory registering with the bus")))
                    shutdown(DBusError.closed)
                    return
                }
                if !attempt.finish(.success((self, name))) { shutdown(DBusError.closed) }
            case .failure(let error):
                let failure: DBusError
                let authenticated = dbus_connection_get_is_authenticated(connection) != 0
                if error.code == .noReply && monotonicNanos() >= attempt.deadline {
                    failure = attempt.timedOut(
                        authenticated ? "did not answer Hello" : "did not finish authentication")
                } else if error.code == .disconnected {
                    // The bus closed the socket (a cancelled attempt closes it too, but that
                    // attempt is settled already and this error goes nowhere).
                    failure = DBusError(
                        .connectionFailed,
                        authenticated
                            ? "the bus at \(address) closed the connection instead of answering Hello"
                            : "the bus at \(address) closed the connection during authentication")
                } else {
                    var refused = error
                    refused.message = "the bus at \(address) refused Hello: \(error.message)"
                    failure = refused
                }
                attempt.finish(.failure(failure))
                shutdown(DBusError.closed)
            }
        }
    }
}

extension Connection {
    /// Opens the socket on a new thread that then becomes the connection's loop, and waits for
    /// authentication and Hello until `timeout` or until the task is cancelled.
    static func open(address: String, timeout: Duration) async throws(DBusError) -> (Core, String) {
        if Task.isCancelled {
            throw DBusError(.cancelled, "connecting to the bus at \(address) was cancelled")
        }
        guard let wakeFD = EventFD() else {
            throw DBusError(.noMemory, "cannot create an eventfd: \(systemErrorText())")
        }
        let attempt = ConnectAttempt(address: address, timeout: timeout)
        do throws(LoopThread.StartError) {
            try LoopThread.start(named: "dbus-loop") {
                let opened: OpaquePointer
                do throws(DBusError) {
                    opened = try withDBusError("connect to \(address)", failureCode: .connectionFailed) {
                        dbus_connection_open_private(address, $0)
                    }
                } catch {
                    wakeFD.close()
                    attempt.finish(.failure(error))
                    return
                }
                dbus_connection_set_exit_on_disconnect(opened, 0)
                let core = Core(connection: opened, wakeFD: wakeFD)
                guard attempt.opened(core) else {
                    // Given up while connect(2) blocked: nothing has run, release it here.
                    dbus_connection_close(opened)
                    dbus_connection_unref(opened)
                    wakeFD.close()
                    return
                }
                core.register(attempt)
                core.run()
            }
        } catch {
            wakeFD.close()
            throw DBusError(.noMemory, "cannot start the D-Bus event-loop thread: \(error.message)")
        }
        let outcome = await withTaskGroup(of: Void.self) { group in
            // Only for a connect(2) that blocks past the deadline: once the loop runs, it keeps
            // Hello's. A child of this call, so that it ends with it.
            group.addTask {
                try? await Task.sleep(for: min(timeout, .seconds(31_536_000)))
                if !Task.isCancelled { attempt.expire() }
            }
            let outcome = await withTaskCancellationHandler {
                await attempt.outcome()
            } onCancel: {
                attempt.cancel()
            }
            group.cancelAll()
            return outcome
        }
        return try outcome.get()
    }
}
