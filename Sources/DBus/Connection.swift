internal import CDBus
internal import CDBusShims
internal import Glibc
public import Logging
internal import Threads

/// A connection to a message bus. All its work happens on its own event-loop thread; every
/// method here is safe to call from any task. Close it with `close()` (also done when the last
/// reference goes away); when the bus goes away every pending call fails with `.disconnected`
/// and every signal stream finishes.
public final class Connection: Sendable {
    let core: Core
    let executor: LoopTaskExecutor
    /// Sees every method call and its outcome, subscriptions, and connecting (debug level).
    let logger: Logger

    /// The logger of a connection whose caller gave none: it logs nothing.
    public static let loggingDisabled = Logger(label: "dbus", factory: { _ in SwiftLogNoOpLogHandler() })

    /// This connection's unique name on the bus (`:1.42`).
    public let uniqueName: BusName

    /// Connects to the bus at `address` (a D-Bus address such as `unix:path=/run/dbus/x`) and
    /// registers with it (`Hello`). Throws `.connectionFailed` if the bus cannot be reached, or does
    /// not finish authentication and answer Hello within `timeout` (the message says which step it
    /// did not finish), and `.cancelled` at once if the task is cancelled meanwhile. A failed attempt
    /// closes its socket and ends its thread, except in one case libdbus gives no way out of: if
    /// connect(2) itself is still blocked (an AF_UNIX listener whose accept queue is full, a tcp
    /// peer that does not answer), that thread stays until connect(2) returns, then closes what it
    /// got (see Connect.swift). `logger` sees what the connection does (see CallLog.swift).
    public init(address: String, timeout: Duration = .seconds(10), logger: Logger = loggingDisabled)
        async throws(DBusError)
    {
        guard !address.isEmpty, !address.utf8.contains(0) else {
            throw DBusError(.connectionFailed, "invalid D-Bus address \(address.debugDescription)")
        }
        Connection.initialiseLibrary
        let start = monotonicNanos()
        logger.debug("connecting to \(address)", metadata: ["timeout": "\(timeout.compactText)"])
        let opened: (Core, String)
        do throws(DBusError) {
            opened = try await Connection.open(address: address, timeout: timeout)
        } catch {
            logger.debug(
                "cannot connect to \(address): \(error)", metadata: ["ms": "\(millisecondsSince(start))"])
            throw error
        }
        self.core = opened.0
        self.executor = LoopTaskExecutor(core: opened.0)
        self.uniqueName = (try? BusName(opened.1)) ?? BusName(unchecked: ":unknown")
        self.logger = logger
        logger.debug(
            "connected to \(address) as \(uniqueName)", metadata: ["ms": "\(millisecondsSince(start))"])
    }

    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `/var/run/dbus/system_bus_socket`); `timeout`
    /// as for `init(address:timeout:)`.
    public static func system(timeout: Duration = .seconds(10), logger: Logger = loggingDisabled)
        async throws(DBusError) -> Connection
    {
        try await Connection(
            address: address(from: "DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/var/run/dbus/system_bus_socket",
            timeout: timeout, logger: logger)
    }

    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`); `timeout` as for `init(address:timeout:)`.
    public static func session(timeout: Duration = .seconds(10), logger: Logger = loggingDisabled)
        async throws(DBusError) -> Connection
    {
        guard let address = address(from: "DBUS_SESSION_BUS_ADDRESS") else {
            throw DBusError(.connectionFailed, "DBUS_SESSION_BUS_ADDRESS is not set")
        }
        return try await Connection(address: address, timeout: timeout, logger: logger)
    }

    private static func address(from variable: String) -> String? {
        guard let value = getenv(variable) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private static let initialiseLibrary: Void = {
        // Make libdbus's global state thread-safe; messages are built on callers' threads.
        _ = dbus_threads_init_default()
    }()

    deinit {
        let core = self.core
        core.execute { core.shutdown(DBusError.closed) }
    }

    /// Closes the connection (idempotent): pending calls fail with `.disconnected`, streams
    /// finish, exported objects go away. Returns once the connection is released.
    public func close() async {
        logger.debug("closing the connection \(uniqueName)")
        let core = self.core
        core.execute { core.shutdown(DBusError.closed) }
        await core.waitUntilFinished()
    }

    /// False once the connection is closed or the bus went away.
    public var isConnected: Bool { core.isOpen.load(ordering: .acquiring) }

    /// Whether unix fds (`h`) can be passed on this connection.
    public var canPassUnixFDs: Bool {
        get async {
            let core = self.core
            return await withCheckedContinuation { c in
                if !core.execute({ c.resume(returning: core.canPassFDs.load(ordering: .acquiring)) }) {
                    c.resume(returning: false)
                }
            }
        }
    }

    // MARK: Method calls

    static func makeCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        body: [Value], noReply: Bool, autoStart: Bool, interactive: Bool
    ) throws(DBusError) -> OwnedMessage {
        guard
            let pointer = dbus_message_new_method_call(
                destination?.rawValue, path.rawValue, interface?.rawValue, member.rawValue)
        else { throw DBusError(.noMemory, "out of memory creating a method call") }
        let message = OwnedMessage(adopting: pointer)
        if noReply { dbus_message_set_no_reply(pointer, 1) }
        if !autoStart { dbus_message_set_auto_start(pointer, 0) }
        if interactive { dbus_message_set_allow_interactive_authorization(pointer, 1) }
        try Encoder.append(body, to: pointer)
        return message
    }

    /// Calls a method and waits for its reply. Throws `DBusError`: the peer's error (with its
    /// name and message), `.noReply` after `timeout`, `.disconnected`, `.cancelled`, or
    /// `.invalidValue`/`.limitsExceeded` if `body` cannot be sent.
    public func call(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        body: [Value] = [], timeout: Duration = .seconds(25), autoStart: Bool = true,
        allowInteractiveAuthorization: Bool = false
    ) async throws(DBusError) -> Message {
        let message = try Connection.makeCall(
            destination: destination, path: path, interface: interface, member: member, body: body,
            noReply: false, autoStart: autoStart, interactive: allowInteractiveAuthorization)
        // The one check a call costs when nothing is logged.
        guard logger.logLevel <= .debug else { return try await send(call: message, timeout: timeout) }
        let summary = CallSummary(
            destination: destination, path: path, interface: interface, member: member, body: body)
        return try await sendLogged(call: message, summary, timeout: timeout)
    }

    func send(call message: OwnedMessage, timeout: Duration) async throws(DBusError) -> Message {
        let core = self.core
        let token = core.nextToken()
        let nanos = timeout.clampedNanoseconds
        let result: Result<Message, DBusError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<Message, DBusError>, Never>) in
                if Task.isCancelled {
                    c.resume(returning: .failure(DBusError(.cancelled, "the call was cancelled")))
                    return
                }
                core.startCall(message, timeout: nanos, token: token) { c.resume(returning: $0) }
            }
        } onCancel: {
            core.cancelCall(token: token)
        }
        return try result.get()
    }

    /// Calls a method without asking for a reply.
    public func callNoReply(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        body: [Value] = []
    ) throws(DBusError) {
        let message = try Connection.makeCall(
            destination: destination, path: path, interface: interface, member: member, body: body,
            noReply: true, autoStart: true, interactive: false)
        if logger.logLevel <= .debug {
            CallSummary(
                destination: destination, path: path, interface: interface, member: member, body: body
            )
            .logSent(to: logger)
        }
        try enqueueSend(message)
    }

    /// Emits a signal (broadcast, or unicast to `destination`). It is queued at once, in order with
    /// everything sent before it, so a signal emitted by a method handler before it returns goes
    /// out before that method's reply.
    public func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, body: [Value] = [],
        destination: BusName? = nil
    ) throws(DBusError) {
        let message = try Connection.makeSignal(
            path: path, interface: interface, member: member, body: body, destination: destination)
        try enqueueSend(message)
    }

    static func makeSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, body: [Value], destination: BusName?
    ) throws(DBusError) -> OwnedMessage {
        guard let pointer = dbus_message_new_signal(path.rawValue, interface.rawValue, member.rawValue) else {
            throw DBusError(.noMemory, "out of memory creating a signal")
        }
        let message = OwnedMessage(adopting: pointer)
        if let destination { dbus_message_set_destination(pointer, destination.rawValue) }
        try Encoder.append(body, to: pointer)
        return message
    }

    func enqueueSend(_ message: OwnedMessage) throws(DBusError) {
        try core.send(message)
    }

    /// Waits until everything queued so far has been handed to the socket layer.
    public func flush() async {
        let core = self.core
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let accepted = core.execute {
                if core.open { dbus_connection_flush(core.connection) }
                c.resume()
            }
            if !accepted { c.resume() }
        }
    }
}

// MARK: - Bus methods

/// Flags for `requestName`.
public struct RequestNameFlags: OptionSet, Sendable {
    /// The bits as the bus's RequestName takes them.
    public let rawValue: UInt32
    /// Flags from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `DBUS_NAME_FLAG_ALLOW_REPLACEMENT`: another connection asking with `replaceExisting` may take the
    /// name from us.
    public static let allowReplacement = RequestNameFlags(rawValue: 1)
    /// `DBUS_NAME_FLAG_REPLACE_EXISTING`: take the name from its owner if that owner allowed replacement.
    public static let replaceExisting = RequestNameFlags(rawValue: 2)
    /// `DBUS_NAME_FLAG_DO_NOT_QUEUE`: fail (`.exists`) rather than wait in the queue for the name.
    public static let doNotQueue = RequestNameFlags(rawValue: 4)
}

/// What `requestName` achieved.
public enum RequestNameReply: UInt32, Sendable {
    /// 1: we own the name now; 2 `inQueue`: queued behind its owner; 3 `exists`: owned by another and
    /// `doNotQueue` was given; 4 `alreadyOwner`: we owned it already.
    case primaryOwner = 1, inQueue, exists, alreadyOwner
}

/// What `releaseName` did.
public enum ReleaseNameReply: UInt32, Sendable {
    /// 1: we no longer own the name (nor wait for it); 2 `nonExistent`: nobody owned it; 3 `notOwner`:
    /// another connection owns it.
    case released = 1, nonExistent, notOwner
}

extension Connection {
    func busCall(_ member: MemberName, _ body: [Value], timeout: Duration = .seconds(25))
        async throws(DBusError) -> Message
    {
        try await call(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: member, body: body,
            timeout: timeout)
    }

    /// Asks the bus for a well-known name.
    public func requestName(_ name: BusName, flags: RequestNameFlags = .doNotQueue) async throws(DBusError)
        -> RequestNameReply
    {
        let reply = try await busCall("RequestName", [.string(name.rawValue), .uint32(flags.rawValue)])
        let code = try reply.decode(UInt32.self)
        guard let result = RequestNameReply(rawValue: code) else {
            throw DBusError(.typeMismatch, "RequestName returned unknown code \(code)")
        }
        return result
    }

    /// Releases a well-known name.
    @discardableResult
    public func releaseName(_ name: BusName) async throws(DBusError) -> ReleaseNameReply {
        let reply = try await busCall("ReleaseName", [.string(name.rawValue)])
        let code = try reply.decode(UInt32.self)
        guard let result = ReleaseNameReply(rawValue: code) else {
            throw DBusError(.typeMismatch, "ReleaseName returned unknown code \(code)")
        }
        return result
    }

    /// The unique name owning `name`, or nil if it has none.
    public func nameOwner(_ name: BusName) async throws(DBusError) -> BusName? {
        do {
            let reply = try await busCall("GetNameOwner", [.string(name.rawValue)])
            return try BusName(try reply.decode(String.self))
        } catch  where error.code == .nameHasNoOwner {
            return nil
        }
    }
}
