import DBus
public import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// hrm's client of bluetoothd: one system-bus connection and a mirror of bluetoothd's objects.
///
/// The match rules are in place before GetManagedObjects, so nothing that happens in between is
/// missed; from then on the mirror follows the signals in bus order.
public actor BlueZClient {
    static let service = BlueZNames.service
    static let adapterInterface = BlueZNames.Interface.adapter
    static let deviceInterface = BlueZNames.Interface.device
    static let serviceInterface = BlueZNames.Interface.service
    static let characteristicInterface = BlueZNames.Interface.characteristic
    static let descriptorInterface = BlueZNames.Interface.descriptor
    static let batteryInterface = BlueZNames.Interface.battery

    let connection: Connection
    var mirror = ObjectMirror()
    /// Applies bluetoothd's signals to the mirror (MirrorFollower.swift); close() ends it and
    /// waits for it.
    var follower: Task<Void, Never>? = nil
    /// The mirror's subscription's bound, and a test's hold on its follower.
    let mirrorOptions: MirrorOptions
    /// Numbers each characteristic's Value signals, so that a StartNotify session can count those
    /// the mirror's stream dropped.
    nonisolated let valueNumbers = ValueNumbers()
    private var watchers: [Int: AsyncStream<ObjectEvent>.Continuation] = [:]
    /// This client's running discoveries, by adapter path: each `discover` stream's number, so
    /// that a discovery `stopDiscovery(on:)` ended is not stopped again by its stream's end.
    var scans: [ObjectPath: Int] = [:]
    /// Adapters whose stream's end is sending StopDiscovery, with who waits for its answer.
    var streamStops: [ObjectPath: [CheckedContinuation<Void, Never>]] = [:]
    var nextScan = 0
    private var nextWatcher = 0
    /// The connection to the bus is gone (not closed by us).
    private var busGone = false
    private var lossWaiters: [Int: AsyncStream<Void>.Continuation] = [:]
    /// Characteristics with a StartNotify session of ours, by path.
    var notifying: Set<AttributePath> = []
    /// StopNotify calls on their way, by characteristic path (kept in `tasks` too).
    var stopping: [AttributePath: Task<Void, Never>] = [:]
    /// The tasks started from callbacks (a stream's or a socket's end) and the relays of streams
    /// handed out: close() cancels them and waits for them.
    nonisolated let tasks = ClientTasks()
    /// The acquired notify sockets, by characteristic path: each one's reader, and what its
    /// stream dropped (see `StreamDrops`).
    var acquired: [AttributePath: (reader: DatagramReader, drops: StreamDrops)] = [:]
    /// StartNotify sessions (kept across drops), by characteristic path.
    var sessions: [AttributePath: NotifySession] = [:]
    /// Every call to bluetoothd gets this timeout unless a slower step needs more.
    let callTimeout: Duration
    /// What the client decides and what bluetoothd's signals say (see ClientLog.swift).
    nonisolated let logger: Logger
    /// Decided once, so that a signal costs one test of a flag when nothing is logged: signals
    /// at debug, each notification at trace.
    nonisolated let logsSignals: Bool
    nonisolated let logsNotifications: Bool

    init(connection: Connection, callTimeout: Duration, logger: Logger, mirrorOptions: MirrorOptions) {
        self.connection = connection
        self.callTimeout = callTimeout
        self.logger = logger
        self.mirrorOptions = mirrorOptions
        logsSignals = logger.logLevel <= .debug
        logsNotifications = logger.logLevel <= .trace
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured) or to `address`, and loads
    /// bluetoothd's objects. `logger` sees the client's decisions and bluetoothd's signals,
    /// `busLogger` (else `logger`) every method call on the bus; by default nothing is logged.
    public static func connect(
        address: String? = nil, timeout: Duration = .seconds(10),
        logger: Logger? = nil, busLogger: Logger? = nil
    )
        async throws(BlueZError)
        -> BlueZClient
    {
        try await connect(
            address: address, timeout: timeout, logger: logger, busLogger: busLogger, mirror: MirrorOptions())
    }

    /// `connect` with the mirror's subscription bounded as `mirror` says (tests make it small and
    /// hold its follower).
    static func connect(
        address: String?, timeout: Duration, logger: Logger?, busLogger: Logger?, mirror: MirrorOptions
    ) async throws(BlueZError) -> BlueZClient {
        let logger = logger ?? Connection.loggingDisabled
        let busLogger = busLogger ?? logger
        let connection: Connection
        do throws(DBusError) {
            if let address {
                connection = try await Connection(address: address, timeout: timeout, logger: busLogger)
            } else {
                connection = try await Connection.system(timeout: timeout, logger: busLogger)
            }
        } catch {
            // Ctrl-C while connecting is a stop asked for, not a bus that is unavailable.
            if error.code == .cancelled { throw BlueZError(error, call: "connecting to the system bus") }
            guard address == nil else {
                throw BlueZError(
                    .disconnected, "cannot connect to the bus: \(error.message)",
                    dbusName: error.name.rawValue)
            }
            // libdbus says `connect to unix:path=P: Failed to connect to socket P: why`: the
            // address once, and why, is what a person needs.
            let reason = error.message.split(separator: ":").last.map { $0.trimmingPrefix(" ") } ?? ""
            let busAddress = Self.systemBusAddress
            throw BlueZError(
                .noSystemBus, "the system D-Bus is not running: nothing answers at \(busAddress) (\(reason))",
                dbusName: error.name.rawValue)
        }
        let client = BlueZClient(
            connection: connection, callTimeout: timeout, logger: logger, mirrorOptions: mirror)
        try await client.load()
        return client
    }

    /// Where the system bus is looked for: `DBUS_SYSTEM_BUS_ADDRESS`, else D-Bus's standard place.
    static var systemBusAddress: String {
        guard let value = getenv("DBUS_SYSTEM_BUS_ADDRESS"), value.pointee != 0 else {
            return "unix:path=/run/dbus/system_bus_socket"
        }
        return String(cString: value)
    }

    func load() async throws(BlueZError) {
        do throws(DBusError) {
            let events = try await subscribeToObjects()
            let objects = try await connection.managedObjects(destination: Self.service, timeout: callTimeout)
            mirror = ObjectMirror(objects)
            if logsSignals { logLoaded() }
            follower = Task { [reference = WeakClient(client: self), hold = mirrorOptions.beforeEachSignal] in
                await BlueZClient.follow(events, of: reference, hold: hold)
            }
        } catch {
            throw await failure(error, call: "GetManagedObjects", timeout: callTimeout)
        }
    }

    /// The system bus went away: every object went with it, and nothing more will come. Waits and
    /// object streams end; `busLost` says so to whoever waits for it.
    func lostTheBus() {
        guard !busGone else { return }
        busGone = true
        logger.info("lost the connection to the system bus")
        for watcher in watchers.values { watcher.finish() }
        watchers = [:]
        for waiter in lossWaiters.values { waiter.finish() }
        lossWaiters = [:]
    }

    /// Returns true once the connection to the system bus is lost (dbus-daemon stopped or
    /// restarted: bluetoothd's objects, the mirror and every call are gone with it), false when
    /// the waiting task is cancelled or the client closed first.
    public func busLost() async -> Bool {
        if busGone { return true }
        let (ended, waiter) = AsyncStream.makeStream(of: Void.self)
        nextWatcher += 1
        let id = nextWatcher
        lossWaiters[id] = waiter
        for await _ in ended {}
        lossWaiters[id] = nil
        return busGone
    }

    /// bluetoothd went away (every object with it, without a signal: connected devices are
    /// announced disconnected, then everything removed) or came back (its objects loaded again).
    func ownerChanged(_ owner: String?) async {
        logger.info(
            owner.map { "bluetoothd is on the bus (\($0)): loading its objects again" }
                ?? "bluetoothd left the bus: its objects are gone")
        guard owner != nil else { return resynchronise(to: [:]) }
        guard
            let objects = try? await connection.managedObjects(
                destination: Self.service, timeout: callTimeout)
        else { return }
        resynchronise(to: objects)
    }

    /// Applies a signal (or an event made up to stand for what signals said). `valueNumber` is a
    /// characteristic Value signal's number (`ValueNumbers`): only such a signal is a notification
    /// for a StartNotify session; a Value that a resynchronisation finds changed is not.
    func apply(_ event: ObjectEvent, valueNumber: UInt64? = nil) {
        if logsSignals { log(event) }
        mirror.apply(event)
        // StartNotify's values go to their sessions' bounded queues, not through a watcher's
        // stream: a consumer stuck on a full stdout would make the watcher drop the newest
        // events; a session's queue counts what it drops.
        if !sessions.isEmpty, case .propertiesChanged(let change) = event {
            routeToSessions(change, valueNumber: valueNumber)
        }
        for watcher in watchers.values { watcher.yield(event) }
    }

    /// Brings the mirror to `objects` (a fresh GetManagedObjects, or none: bluetoothd gone) through
    /// the events that say the differences, so that watchers and sessions hear of them.
    func resynchronise(to objects: [ObjectPath: [String: ObjectMirror.Properties]]) {
        for event in mirror.differences(to: objects) { apply(event) }
    }

    /// Every object event after the mirror has applied it, until `unwatch`. Bounded: at most
    /// `keeping` events wait, the newest kept (a watcher reads the mirror for the state, so an
    /// event it missed is only an older view of what the mirror holds; `wait` needs only to be
    /// woken, `keeping: 1`). A watcher that stops reading can no longer grow by every signal.
    func watch(keeping: Int = BlueZClient.watcherCapacity) -> (AsyncStream<ObjectEvent>, Int) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ObjectEvent.self, bufferingPolicy: .bufferingNewest(max(keeping, 1)))
        nextWatcher += 1
        watchers[nextWatcher] = continuation
        return (stream, nextWatcher)
    }

    func unwatch(_ id: Int) {
        watchers.removeValue(forKey: id)?.finish()
    }

    /// Ends every notification session and watcher (their streams finish), stops the tasks the
    /// client started and waits for them (the mirror's follower, relays, calls on their way),
    /// then closes the bus connection. The client is of no use afterwards.
    public func close() async {
        follower?.cancel()
        await follower?.value
        for watcher in watchers.values { watcher.finish() }
        watchers = [:]
        for waiter in lossWaiters.values { waiter.finish() }
        lossWaiters = [:]
        for session in sessions.values { session.close() }
        sessions = [:]
        await tasks.close()
        await connection.close()
    }

    // MARK: - Adapters

    /// Every adapter, sorted by path (two adapters have no stable "default" order on the bus).
    public func adapters() -> [Adapter] {
        mirror.paths(with: Self.adapterInterface).compactMap { adapter(at: $0) }
    }

    func adapter(at path: ObjectPath) -> Adapter? {
        guard let properties = mirror.properties(path, Self.adapterInterface) else { return nil }
        func string(_ key: String) -> String? { if case .string(let s)? = properties[key] { s } else { nil } }
        func bool(_ key: String) -> Bool { if case .boolean(let b)? = properties[key] { b } else { false } }
        return Adapter(
            name: path.lastElement, path: AdapterPath(path),
            address: string("Address").flatMap { BluetoothAddress($0) },
            alias: string("Alias"), powered: bool("Powered"), discovering: bool("Discovering"),
            blocked: string("PowerState") == "off-blocked")
    }

    /// The adapter named (`hci0`) or with the address given; without either, the first powered
    /// adapter in path order, else the first one (so that "powered off" can be reported for it).
    public func selectAdapter(_ nameOrAddress: String? = nil) throws(BlueZError) -> Adapter {
        let all = adapters()
        guard !all.isEmpty else { throw BlueZError(.noAdapter, "no Bluetooth adapter found") }
        if let wanted = nameOrAddress {
            let address = BluetoothAddress(wanted)
            guard
                let match = all.first(where: {
                    $0.name == wanted || ($0.address != nil && $0.address == address)
                })
            else {
                throw BlueZError(
                    .adapterNotFound,
                    "no adapter '\(wanted)'; there is \(all.map(\.name).joined(separator: ", "))")
            }
            logger.debug(
                "adapter \(match.name) chosen: asked for '\(wanted)'",
                metadata: ["adapters": "\(all.summary)"])
            return match
        }
        let chosen = all.first(where: \.powered) ?? all[0]
        logger.debug(
            "adapter \(chosen.name) chosen: \(chosen.powered ? "the first powered one" : "none is powered, the first one")",
            metadata: ["adapters": "\(all.summary)"])
        return chosen
    }

    static func blocked(_ adapter: Adapter) -> BlueZError {
        BlueZError(
            .adapterBlocked, "the adapter \(adapter.name) is blocked through rfkill (Bluetooth switched off)")
    }

    /// How many object events wait for a watcher that has not read them, at most.
    static let watcherCapacity = 256

    /// Powers the adapter on and waits (up to `timeout`) until bluetoothd says it is.
    public func powerOn(_ adapter: Adapter, timeout: Duration = .seconds(5)) async throws(BlueZError)
        -> Adapter
    {
        if adapter.powered { return adapter }
        let path = adapter.path.objectPath
        if adapter.blocked { throw Self.blocked(adapter) }
        logger.info("powering on \(adapter.name)")
        do throws(BlueZError) {
            try await set("Powered", to: .boolean(true), on: path, interface: BlueZNames.Call.adapter)
        } catch {
            if error.dbusName == "org.bluez.Error.Blocked" { throw Self.blocked(adapter) }
            throw error
        }
        // Woken by bluetoothd's PropertiesChanged, not by polling the mirror.
        do throws(BlueZError) {
            _ = try await wait("\(adapter.name) to power on", timeout: timeout) {
                mirror -> WaitOutcome<Bool> in
                guard case .boolean(true)? = mirror.properties(path, Self.adapterInterface)?["Powered"] else {
                    return .pending
                }
                return .done(true)
            }
        } catch  where error.code == .timeout {
            throw BlueZError(.timeout, "\(adapter.name) did not power on within \(timeout)")
        }
        guard let current = self.adapter(at: path) else {
            throw BlueZError(.noAdapter, "\(adapter.name) went away while powering on")
        }
        return current
    }
}

extension BlueZClient {
    /// Sleeps for `delay`, or less if Bluetooth became usable meanwhile: bluetoothd came back or
    /// an adapter was powered on. A reconnect loop's backoff then does not delay the return.
    public func pause(_ delay: Duration) async {
        let poweredBefore = Set(adapters().filter(\.powered).map(\.path))
        _ = try? await wait("Bluetooth to come back", timeout: delay) { mirror -> WaitOutcome<Bool> in
            let powered = Set(
                mirror.paths(with: Self.adapterInterface).filter {
                    mirror.properties($0, Self.adapterInterface)?["Powered"] == .boolean(true)
                }.map(AdapterPath.init))
            return powered.isSubset(of: poweredBefore) ? .pending : .done(true)
        }
    }
}
