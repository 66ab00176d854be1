import DBus
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A GATT application and an LE advertisement of hrm's, registered with bluetoothd on one adapter
/// (`GattManager1.RegisterApplication`, `LEAdvertisingManager1.RegisterAdvertisement`). Made by
/// `BlueZClient.registerPeripheral`; `unregister` takes both back. Values go out to centrals as
/// bluetoothd expects of a server characteristic: into the socket it took by AcquireNotify (which
/// bluetoothd 5.66 asks for, the characteristic having `NotifyAcquired`), or as a
/// PropertiesChanged of `Value` while it has asked by StartNotify; nothing otherwise. A read gets
/// the latest value.
public final class Peripheral: Sendable {
    /// The adapter it is registered on.
    public let adapter: AdapterPath
    /// The characteristics served, in the order given.
    public let characteristics: [ServedCharacteristicHandle]
    /// What bluetoothd asks for (StartNotify, StopNotify, reads, Release), in order; it finishes
    /// on `unregister`.
    public let events: AsyncStream<PeripheralEvent>

    let connection: Connection
    let root: ObjectPath
    let advertisementPath: ObjectPath
    let paths: [ObjectPath]
    let timeout: Duration
    let logger: Logger
    private let continuation: AsyncStream<PeripheralEvent>.Continuation

    struct State {
        var values: [[UInt8]]
        var advertisement: AdvertisementSettings
        var notifying: Set<Int> = []
        var registered = true
        /// Characteristics bluetoothd took by AcquireNotify: their sockets, each with the number
        /// of its acquisition (a socket's end is told only for the acquisition it belongs to).
        var acquired: [Int: (socket: ServedNotifySocket, number: Int)] = [:]
        var acquisitions = 0
    }

    private let state: Mutex<State>

    init(
        adapter: AdapterPath, connection: Connection, root: ObjectPath, advertisement: AdvertisementSettings,
        advertisementPath: ObjectPath,
        characteristics: [ServedCharacteristic], paths: [ObjectPath], timeout: Duration, logger: Logger
    ) {
        self.logger = logger
        self.adapter = adapter
        self.connection = connection
        self.root = root
        self.advertisementPath = advertisementPath
        self.paths = paths
        self.timeout = timeout
        self.characteristics = characteristics.enumerated().map {
            ServedCharacteristicHandle(uuid: $0.element.uuid, index: $0.offset)
        }
        state = Mutex(State(values: characteristics.map(\.value), advertisement: advertisement))
        // Bounded: a reader that stops reading loses the oldest, never blocks bluetoothd's calls.
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    /// The handle of the characteristic of `uuid`, if served.
    public func characteristic(_ uuid: BluetoothUUID) -> ServedCharacteristicHandle? {
        characteristics.first { $0.uuid == uuid }
    }

    /// Whether bluetoothd wants notifications of `characteristic` (a central subscribed).
    public func isNotifying(_ characteristic: ServedCharacteristicHandle) -> Bool {
        state.withLock { $0.notifying.contains(characteristic.index) }
    }

    /// Sets the value and, while bluetoothd wants notifications of it, sends it as one (each
    /// call one notification, identical values too). Never waits: the signal is queued on the
    /// connection. Returns whether a notification went out.
    @discardableResult
    public func notify(_ characteristic: ServedCharacteristicHandle, _ value: [UInt8]) -> Bool {
        enum Route { case none, sent(Bool), signal }
        let route = state.withLock { state -> Route in
            guard state.registered, state.values.indices.contains(characteristic.index) else { return .none }
            state.values[characteristic.index] = value
            // Under the lock: the socket cannot be closed while a value goes into it.
            if let acquired = state.acquired[characteristic.index] {
                return .sent(acquired.socket.send(value))
            }
            return state.notifying.contains(characteristic.index) ? .signal : .none
        }
        switch route {
        case .none: return false
        case .sent(let sent): return sent
        case .signal: break
        }
        do throws(DBusError) {
            try connection.setProperty(
                "Value", to: .bytes(value), interface: BlueZNames.Call.characteristic,
                at: paths[characteristic.index])
            return true
        } catch {
            return false
        }
    }

    /// What is advertised now.
    public var advertisement: AdvertisementSettings { state.withLock { $0.advertisement } }

    /// Advertises `settings` instead (a name learnt from the strap): bluetoothd reads an
    /// advertisement's properties once, so the old one is unregistered and the new one registered
    /// (each call bounded by the client's timeout). Returns the failure, if any: after a failed
    /// registration nothing is advertised. Nothing happens when `settings` are what is advertised.
    public func advertise(_ settings: AdvertisementSettings) async -> BlueZError? {
        let current = state.withLock { state -> AdvertisementSettings? in
            guard state.registered, state.advertisement != settings else { return nil }
            defer { state.advertisement = settings }
            return state.advertisement
        }
        guard current != nil else { return nil }
        let manager = BlueZNames.Call.advertisingManager
        do throws(DBusError) {
            _ = try await connection.call(
                destination: BlueZNames.service, path: adapter.objectPath, interface: manager,
                member: "UnregisterAdvertisement", body: [.objectPath(advertisementPath)], timeout: timeout)
            connection.unexport(at: advertisementPath)
            try connection.export(
                BlueZClient.advertisementInterface(self), at: advertisementPath,
                properties: BlueZClient.advertisementProperties(settings))
            _ = try await connection.call(
                destination: BlueZNames.service, path: adapter.objectPath, interface: manager,
                member: "RegisterAdvertisement", body: [.objectPath(advertisementPath), .propertyMap([:])],
                timeout: timeout)
            return nil
        } catch {
            return BlueZError(
                .peripheralRefused,
                "bluetoothd refused the advertisement as '\(settings.localName)': \(error.name): \(error.message)",
                dbusName: error.name.rawValue)
        }
    }

    /// Registers the application and the advertisement again, as they are (bluetoothd restarted:
    /// it forgot both, and it asks for notifications afresh, so none are wanted until it does).
    /// Returns the failure, if any.
    public func registerAgain() async -> BlueZError? {
        let (registered, stopped) = state.withLock { state -> (Bool, Set<Int>) in
            defer { state.notifying = [] }
            return (state.registered, state.notifying)
        }
        guard registered else { return nil }
        // The sockets of the bluetoothd that went: closed here, their ends not told again.
        releaseAcquired()
        for index in stopped.sorted() { continuation.yield(.notifying(characteristics[index].uuid, false)) }
        let calls: [(MemberName, InterfaceName, ObjectPath)] = [
            ("RegisterApplication", BlueZNames.Call.gattManager, root),
            ("RegisterAdvertisement", BlueZNames.Call.advertisingManager, advertisementPath),
        ]
        for (member, interface, path) in calls {
            do throws(DBusError) {
                _ = try await connection.call(
                    destination: BlueZNames.service, path: adapter.objectPath, interface: interface,
                    member: member, body: [.objectPath(path), .propertyMap([:])], timeout: timeout)
            } catch {
                let what = member == "RegisterApplication" ? "the GATT application" : "the advertisement"
                return BlueZError(
                    .peripheralRefused, "bluetoothd refused \(what) again: \(error.name): \(error.message)",
                    dbusName: error.name.rawValue)
            }
        }
        return nil
    }

    /// Sets the value a read gets, without notifying.
    public func update(_ characteristic: ServedCharacteristicHandle, _ value: [UInt8]) {
        state.withLock { state in
            guard state.values.indices.contains(characteristic.index) else { return }
            state.values[characteristic.index] = value
        }
    }

    /// Takes the advertisement, then the application, back from bluetoothd (each call bounded by
    /// the client's timeout), and removes the objects from the bus. Safe to call more than once;
    /// returns the first failure, if any (the objects are gone all the same).
    @discardableResult
    public func unregister() async -> BlueZError? {
        let wasRegistered = state.withLock { state -> Bool in
            defer { state.registered = false }
            state.notifying = []
            return state.registered
        }
        guard wasRegistered else { return nil }
        releaseAcquired()
        var failure: BlueZError? = nil
        let calls: [(MemberName, InterfaceName, ObjectPath)] = [
            ("UnregisterAdvertisement", BlueZNames.Call.advertisingManager, advertisementPath),
            ("UnregisterApplication", BlueZNames.Call.gattManager, root),
        ]
        for (member, interface, path) in calls {
            do throws(DBusError) {
                _ = try await connection.call(
                    destination: BlueZNames.service, path: adapter.objectPath, interface: interface,
                    member: member, body: [.objectPath(path)], timeout: timeout)
            } catch {
                if failure == nil { failure = BlueZError(error, call: member.rawValue, timeout: timeout) }
            }
        }
        withdraw()
        return failure
    }

    /// Removes the exported objects (children first) and ends `events`.
    func withdraw() {
        connection.unexport(at: advertisementPath)
        for path in paths.reversed() { connection.unexport(at: path) }
        for path in Set(paths.compactMap(\.parent)).sorted().reversed() { connection.unexport(at: path) }
        connection.removeObjectManager(at: root)
        continuation.finish()
    }

    // What bluetoothd calls (on the connection's thread; nothing here waits).

    func startNotify(_ index: Int) {
        let started = state.withLock { $0.registered && $0.notifying.insert(index).inserted }
        if started { continuation.yield(.notifying(characteristics[index].uuid, true)) }
    }

    /// bluetoothd's AcquireNotify (a first central subscribed): a socket pair, bluetoothd's end
    /// returned for the reply. A second acquisition replaces the first.
    func acquireNotify(_ index: Int) throws(DBusError) -> Int32 {
        let number = state.withLock { state -> Int in
            state.acquisitions += 1
            return state.acquisitions
        }
        let (socket, theirs) = try ServedNotifySocket.make { [weak self] in
            self?.acquisitionEnded(index, number)
        }
        let outcome = state.withLock { state -> (accepted: Bool, replaced: ServedNotifySocket?) in
            guard state.registered else { return (false, nil) }
            let replaced = state.acquired[index]?.socket
            state.acquired[index] = (socket, number)
            return (true, replaced)
        }
        outcome.replaced?.close()
        guard outcome.accepted else {
            socket.close()
            close(theirs)
            throw DBusError(name: "org.bluez.Error.Failed", message: "the application is being unregistered")
        }
        try? connection.setProperty(
            "NotifyAcquired", to: .boolean(true), interface: BlueZNames.Call.characteristic, at: paths[index])
        logger.info("bluetoothd took \(characteristics[index].uuid)'s notifications by AcquireNotify")
        startNotify(index)
        return theirs
    }

    /// bluetoothd closed its end of acquisition `number` (the last central left).
    private func acquisitionEnded(_ index: Int, _ number: Int) {
        let ended = state.withLock { state -> ServedNotifySocket? in
            guard let current = state.acquired[index], current.number == number else { return nil }
            state.acquired[index] = nil
            return current.socket
        }
        guard let ended else { return }
        ended.close()
        try? connection.setProperty(
            "NotifyAcquired", to: .boolean(false), interface: BlueZNames.Call.characteristic, at: paths[index]
        )
        stopNotify(index)
    }

    /// Closes every acquired socket (bluetoothd sees them hang up).
    func releaseAcquired() {
        let sockets = state.withLock { state -> [ServedNotifySocket] in
            defer { state.acquired = [:] }
            return state.acquired.values.map(\.socket)
        }
        for socket in sockets { socket.close() }
    }

    func stopNotify(_ index: Int) {
        let stopped = state.withLock { $0.notifying.remove(index) != nil }
        if stopped { continuation.yield(.notifying(characteristics[index].uuid, false)) }
    }

    func read(_ index: Int, device: BluetoothAddress?) -> [UInt8] {
        continuation.yield(.read(characteristics[index].uuid, device: device))
        return state.withLock { $0.values[index] }
    }

    func released() {
        continuation.yield(.advertisementReleased)
    }
}
