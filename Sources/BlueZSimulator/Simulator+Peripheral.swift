import DBus
import Threads

/// A GATT application or advertisement a client registered, or one of its characteristics: its
/// owner (unique name) and path.
struct PeripheralKey: Hashable, Sendable {
    let owner: String
    let path: ObjectPath
}

/// A GATT application as bluetoothd read it (GetManagedObjects on the client's object manager).
struct RegisteredApplication: Sendable {
    let adapter: String
    /// Characteristics by path: UUID (lower-case, long form) and flags.
    var characteristics: [ObjectPath: (uuid: String, flags: [String])]
    /// Those with a `NotifyAcquired` property: bluetoothd subscribes to them by AcquireNotify.
    var acquiring: Set<ObjectPath> = []
}

/// The peripheral side as bluetoothd 5.66 serves it: GattManager1 and LEAdvertisingManager1 on
/// each adapter that can be a peripheral (`src/gatt-database.c`, `src/advertising.c`), and the
/// scenario's consumers, centrals that connect once an advertisement is up, read, subscribe and
/// log what they receive.
extension Simulator {
    static let gattManager: InterfaceName = "org.bluez.GattManager1"
    static let advertisingManager: InterfaceName = "org.bluez.LEAdvertisingManager1"
    static let advertisement: InterfaceName = "org.bluez.LEAdvertisement1"
    static let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"
    static let alreadyExists = DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
    static let maximumAdvertisements = DBusError(
        name: "org.bluez.Error.NotPermitted", message: "Maximum advertisements reached")
    /// How long bluetoothd waits for a client's answer (its proxies use D-Bus's default).
    static let clientCallTimeout: Duration = .seconds(5)

    func exportPeripheralManagers(_ adapter: AdapterState) throws {
        guard let connection else { return }
        try connection.export(
            Interface(
                Self.gattManager,
                methods: [
                    method("RegisterApplication", input: "oa{sv}") { call in
                        try await self.registerApplication(call)
                    },
                    method("UnregisterApplication", input: "o") { call in
                        try await self.unregisterApplication(call)
                    },
                ]), at: adapter.path)
        try connection.export(
            Interface(
                Self.advertisingManager,
                methods: [
                    method("RegisterAdvertisement", input: "oa{sv}") { call in
                        try await self.registerAdvertisement(call)
                    },
                    method("UnregisterAdvertisement", input: "o") { call in
                        try await self.unregisterAdvertisement(call)
                    },
                ],
                properties: [
                    Property("ActiveInstances", type: .byte), Property("SupportedInstances", type: .byte),
                    Property("SupportedIncludes", type: .array(.string), changes: .constant),
                ]),
            at: adapter.path,
            properties: [
                "ActiveInstances": .byte(0),
                "SupportedInstances": .byte(UInt8(clamping: adapter.spec.maxAdvertisements)),
                "SupportedIncludes": .strings(["tx-power", "appearance", "local-name"]),
            ])
    }

    // MARK: - GattManager1

    func registerApplication(_ call: MethodCall) async throws -> [Value] {
        guard let adapter = adapterName(call.path) else { throw BlueZError.doesNotExist }
        let (path, _) = try call.decode(ObjectPath.self, [String: Value].self)
        let owner = call.sender?.rawValue ?? ""
        let key = PeripheralKey(owner: owner, path: path)
        guard applications[key] == nil else { throw Self.alreadyExists }
        // bluetoothd reads the application before it replies.
        let objects: [ObjectPath: [String: [String: Value]]]
        do {
            objects = try await clientCall(owner) { connection, name in
                try await connection.managedObjects(
                    destination: name, path: path, timeout: Self.clientCallTimeout)
            }
        } catch {
            log.record(
                "application-unreadable", ["owner": owner, "path": path.rawValue, "error": "\(error)"])
            throw BlueZError.failed("No object received")
        }
        var characteristics: [ObjectPath: (uuid: String, flags: [String])] = [:]
        var acquiring: Set<ObjectPath> = []
        var services = 0
        for (objectPath, interfaces) in objects where objectPath.isInNamespace(path) {
            if interfaces[BlueZName.gattService.rawValue] != nil { services += 1 }
            guard let properties = interfaces[BlueZName.gattCharacteristic.rawValue],
                case .string(let uuid)? = properties["UUID"]?.unwrapped,
                case .array(.string, let flags)? = properties["Flags"]?.unwrapped
            else { continue }
            characteristics[objectPath] = (
                uuid.lowercased(), flags.compactMap { if case .string(let f) = $0 { f } else { nil } }
            )
            if properties["NotifyAcquired"] != nil { acquiring.insert(objectPath) }
        }
        guard services > 0 else { throw BlueZError.failed("No object received") }
        applications[key] = RegisteredApplication(
            adapter: adapter, characteristics: characteristics, acquiring: acquiring)
        log.record(
            "application-registered",
            [
                "owner": owner, "path": path.rawValue, "adapter": adapter,
                "characteristics": characteristics.values.map(\.uuid).sorted(),
            ])
        return []
    }

    func unregisterApplication(_ call: MethodCall) throws -> [Value] {
        let (path) = try call.decode(ObjectPath.self)
        let key = PeripheralKey(owner: call.sender?.rawValue ?? "", path: path)
        guard applications.removeValue(forKey: key) != nil else { throw BlueZError.doesNotExist }
        for characteristic in subscribers.keys
        where characteristic.owner == key.owner
            && characteristic.path.isInNamespace(path)
        {
            subscribers[characteristic] = nil
            acquiredNotify.removeValue(forKey: characteristic)?.close()
        }
        log.record("application-unregistered", ["owner": key.owner, "path": path.rawValue])
        return []
    }

    // MARK: - LEAdvertisingManager1

    func registerAdvertisement(_ call: MethodCall) async throws -> [Value] {
        guard let adapter = adapterName(call.path), let state = adapters[adapter] else {
            throw BlueZError.doesNotExist
        }
        let (path, _) = try call.decode(ObjectPath.self, [String: Value].self)
        let owner = call.sender?.rawValue ?? ""
        let key = PeripheralKey(owner: owner, path: path)
        guard advertisements[key] == nil else { throw Self.alreadyExists }
        guard advertisements.values.filter({ $0 == adapter }).count < state.spec.maxAdvertisements else {
            log.record("advertisement-refused", ["owner": owner, "path": path.rawValue, "reason": "maximum"])
            throw Self.maximumAdvertisements
        }
        let properties: [String: Value]
        do {
            properties = try await clientCall(owner) { connection, name in
                try await connection.getAllProperties(
                    interface: Self.advertisement, path: path, destination: name,
                    timeout: Self.clientCallTimeout)
            }
        } catch {
            throw BlueZError.failed("Failed to parse advertisement.")
        }
        guard case .string(let type)? = properties["Type"]?.unwrapped,
            ["peripheral", "broadcast"].contains(type)
        else { throw BlueZError.failed("Failed to parse advertisement.") }
        advertisements[key] = adapter
        announceAdvertisingInstances(adapter)
        var entry: [String: Any] = ["owner": owner, "path": path.rawValue, "adapter": adapter, "type": type]
        if case .string(let name)? = properties["LocalName"]?.unwrapped { entry["local_name"] = name }
        if case .array(.string, let uuids)? = properties["ServiceUUIDs"]?.unwrapped {
            entry["uuids"] = uuids.compactMap { if case .string(let u) = $0 { u } else { nil } }
        }
        if case .uint16(let appearance)? = properties["Appearance"]?.unwrapped {
            entry["appearance"] = appearance
        }
        log.record("advertisement-registered", entry)
        call.afterReply { Task { await self.advertisementUp(adapter, owner: owner) } }
        return []
    }

    func unregisterAdvertisement(_ call: MethodCall) throws -> [Value] {
        let (path) = try call.decode(ObjectPath.self)
        let key = PeripheralKey(owner: call.sender?.rawValue ?? "", path: path)
        guard let adapter = advertisements.removeValue(forKey: key) else { throw BlueZError.doesNotExist }
        announceAdvertisingInstances(adapter)
        log.record("advertisement-unregistered", ["owner": key.owner, "path": path.rawValue])
        return []
    }

    func announceAdvertisingInstances(_ adapter: String) {
        guard let path = adapters[adapter]?.path else { return }
        let active = advertisements.values.filter { $0 == adapter }.count
        try? connection?.setProperty(
            "ActiveInstances", to: .byte(UInt8(clamping: active)), interface: Self.advertisingManager,
            at: path)
    }

    /// bluetoothd going away releases what clients registered: each advertisement's Release.
    func releasePeripherals() async {
        for task in consumerTasks.values { task.cancel() }
        consumerTasks = [:]
        for (key, _) in advertisements {
            guard let name = try? BusName(key.owner) else { continue }
            try? connection?.callNoReply(
                destination: name, path: key.path, interface: Self.advertisement, member: "Release")
            log.record("advertisement-released", ["owner": key.owner, "path": key.path.rawValue])
        }
        if let connection { await connection.flush() }
        advertisements = [:]
        applications = [:]
        subscribers = [:]
        for reader in acquiredNotify.values { reader.close() }
        acquiredNotify = [:]
    }

    /// A client that leaves the bus takes its applications and advertisements with it.
    func peripheralClientLeft(_ name: String) {
        let adapters = Set(advertisements.filter { $0.key.owner == name }.values)
        advertisements = advertisements.filter { $0.key.owner != name }
        applications = applications.filter { $0.key.owner != name }
        subscribers = subscribers.filter { $0.key.owner != name }
        for (key, reader) in acquiredNotify where key.owner == name { reader.close() }
        acquiredNotify = acquiredNotify.filter { $0.key.owner != name }
        for adapter in adapters { announceAdvertisingInstances(adapter) }
    }

    func clientCall<T: Sendable>(
        _ owner: String, _ body: @Sendable (Connection, BusName) async throws -> T
    ) async throws -> T {
        guard let connection else { throw BlueZError.notReady }
        return try await body(connection, try BusName(owner))
    }

    // MARK: - Consumers

    /// An advertisement is up on `adapter`: the scenario's consumers of that adapter that are not
    /// at work yet start.
    func advertisementUp(_ adapter: String, owner: String) {
        for (index, consumer) in scenario.consumers.enumerated()
        where (consumer.adapter ?? adapterOrder.first) == adapter && consumerTasks[index] == nil {
            consumerTasks[index] = Task { [weak self] in
                try? await Task.sleep(for: .seconds(consumer.connectAfter))
                if Task.isCancelled { return }
                await self?.runConsumer(index, consumer, adapter: adapter)
            }
        }
    }

    /// The application of `owner` on `adapter` the consumer finds by the advertisement.
    func application(on adapter: String) -> (key: PeripheralKey, app: RegisteredApplication)? {
        guard let owner = advertisements.first(where: { $0.value == adapter })?.key.owner else { return nil }
        return applications.first { $0.key.owner == owner && $0.value.adapter == adapter }.map {
            ($0.key, $0.value)
        }
    }

    func runConsumer(_ index: Int, _ consumer: Scenario.Consumer, adapter: String) async {
        guard let address = SimulatedAddress(consumer.address), let adapterPath = adapters[adapter]?.path,
            let devicePath = try? adapterPath.appending(address.pathComponent),
            let (key, app) = application(on: adapter), let connection
        else {
            // Nothing advertised now (the client is re-registering its advertisement): the
            // consumer looks again when the next advertisement is up.
            log.record("consumer-waiting", ["consumer": consumer.address, "reason": "nothing advertised"])
            consumerTasks[index] = nil
            return
        }
        let name = "\(address)"
        // The central's link: a Device1 on the adapter, connected, as bluetoothd shows a central.
        try? connection.export(
            Interface(
                BlueZName.device,
                properties: [
                    Property("Address", type: .string, changes: .constant),
                    Property("AddressType", type: .string, changes: .constant),
                    Property("Alias", type: .string),
                    Property("Adapter", type: .objectPath, changes: .constant),
                    Property("Connected", type: .boolean), Property("ServicesResolved", type: .boolean),
                    Property("Paired", type: .boolean), Property("Trusted", type: .boolean),
                    Property("UUIDs", type: .array(.string)),
                ]),
            at: devicePath,
            properties: [
                "Address": .string(name), "AddressType": .string("random"), "Alias": .string(name),
                "Adapter": .objectPath(adapterPath), "Connected": .boolean(true),
                "ServicesResolved": .boolean(true),
                "Paired": .boolean(false), "Trusted": .boolean(false), "UUIDs": .strings([]),
            ])
        log.record("consumer-connected", ["consumer": name, "adapter": adapter])
        let owner = key.owner
        let options: Value = .propertyMap(["device": .objectPath(devicePath), "link": .string("LE")])
        if consumer.read {
            for (path, characteristic) in app.characteristics.sorted(by: { $0.key < $1.key })
            where characteristic.flags.contains("read") {
                do {
                    let reply = try await clientCall(owner) { connection, busName in
                        try await connection.call(
                            destination: busName, path: path, interface: BlueZName.gattCharacteristic,
                            member: "ReadValue", body: [options], timeout: Self.clientCallTimeout)
                    }
                    let bytes: [UInt8] = if case .bytes(let b)? = reply.body.first { b } else { [] }
                    log.record(
                        "consumer-read",
                        ["consumer": name, "uuid": characteristic.uuid, "hex": Self.hex(bytes)])
                } catch {
                    log.record(
                        "consumer-read-failed",
                        ["consumer": name, "uuid": characteristic.uuid, "error": "\(error)"])
                }
            }
        }
        if consumer.subscribe {
            await subscribeConsumer(index, consumer, name: name, key: key, app: app, devicePath: devicePath)
        }
        if let after = consumer.disconnectAfter {
            try? await Task.sleep(for: .seconds(after))
            guard !Task.isCancelled else { return }
            await unsubscribeConsumer(index, name: name, key: key, app: app)
            try? connection.setProperties(
                ["Connected": .boolean(false), "ServicesResolved": .boolean(false)],
                interface: BlueZName.device,
                at: devicePath)
            connection.unexport(at: devicePath)
            log.record("consumer-disconnected", ["consumer": name, "adapter": adapter])
        }
    }

    private func notifying(_ app: RegisteredApplication) -> [ObjectPath] {
        app.characteristics.filter { $0.value.flags.contains("notify") }.keys.sorted()
    }

    /// Subscribes (on each notifying characteristic nobody subscribed to yet: AcquireNotify where
    /// the application offers it, as bluetoothd 5.66 does, else StartNotify) and logs what arrives
    /// until `unsubscribeAfter` values of 0x2A37 came, then unsubscribes.
    func subscribeConsumer(
        _ index: Int, _ consumer: Scenario.Consumer, name: String, key: PeripheralKey,
        app: RegisteredApplication, devicePath: ObjectPath
    ) async {
        guard let connection, let sender = try? BusName(key.owner) else { return }
        let values: AsyncStream<Sequenced<PropertiesChanged>>
        do {
            // Subscribed before StartNotify, so that nothing sent in between is missed.
            values = try await connection.propertiesChanged(
                sender: sender, pathNamespace: key.path, interface: BlueZName.gattCharacteristic)
        } catch {
            log.record("consumer-subscribe-failed", ["consumer": name, "error": "\(error)"])
            return
        }
        let inbox = consumerInboxes.open(index, paths: Set(notifying(app)))
        // A StartNotify session's values: this consumer's own copy of each signal.
        let inboxes = consumerInboxes
        let forwarding = Task {
            for await change in values {
                guard case .bytes(let bytes)? = change.element.changed["Value"] else { continue }
                inboxes.deliver(
                    ConsumerValue(path: change.element.path, bytes: bytes, monoNanos: monotonicNanos()),
                    to: index)
            }
        }
        defer { forwarding.cancel() }
        for path in notifying(app) {
            let characteristic = PeripheralKey(owner: key.owner, path: path)
            let first = subscribers[characteristic, default: []].isEmpty
            subscribers[characteristic, default: []].insert(index)
            guard first else { continue }
            if app.acquiring.contains(path),
                await acquireNotify(characteristic, sender: sender, devicePath: devicePath, consumer: name)
            {
                continue
            }
            do {
                _ = try await connection.call(
                    destination: sender, path: path, interface: BlueZName.gattCharacteristic,
                    member: "StartNotify",
                    timeout: Self.clientCallTimeout)
            } catch {
                log.record(
                    "consumer-subscribe-failed",
                    ["consumer": name, "path": path.rawValue, "error": "\(error)"])
            }
        }
        log.record("consumer-subscribed", ["consumer": name])
        guard consumer.receives else {
            // Subscribed, and never takes a value: the inbox fills and drops, hrm must not care.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return
        }
        var measurements = 0
        for await value in inbox {
            guard let uuid = app.characteristics[value.path]?.uuid else { continue }
            // bluetoothd notifies only the centrals that subscribed and are still subscribed.
            guard subscribers[PeripheralKey(owner: key.owner, path: value.path)]?.contains(index) == true
            else { continue }
            // When it arrived (CLOCK_MONOTONIC, as a strap's `notify`): the relay's latency.
            log.record(
                "consumer-value",
                ["consumer": name, "uuid": uuid, "hex": Self.hex(value.bytes), "mono_ns": value.monoNanos])
            if uuid == Self.heartRateMeasurement { measurements += 1 }
            if let limit = consumer.unsubscribeAfter, measurements >= limit { break }
        }
        await unsubscribeConsumer(index, name: name, key: key, app: app)
    }

    /// bluetoothd's AcquireNotify on a client's characteristic (gatt-database.c's ccc_write_cb):
    /// the socket it returns is read on a thread of its own, each datagram a notification to the
    /// subscribed consumers. False when the client refused (the caller falls back to StartNotify).
    private func acquireNotify(
        _ characteristic: PeripheralKey, sender: BusName, devicePath: ObjectPath, consumer: String
    ) async -> Bool {
        guard let connection else { return false }
        let options: Value = .propertyMap([
            "device": .objectPath(devicePath), "mtu": .uint16(517), "link": .string("LE"),
        ])
        do {
            let reply = try await connection.call(
                destination: sender, path: characteristic.path, interface: BlueZName.gattCharacteristic,
                member: "AcquireNotify", body: [options], timeout: Self.clientCallTimeout)
            let (fd, _) = try reply.decode(UnixFD.self, UInt16.self)
            guard let descriptor = fd.take() else {
                throw BlueZError.failed("AcquireNotify returned no descriptor")
            }
            acquiredNotify[characteristic]?.close()
            acquiredNotify[characteristic] = try AcquiredNotifyReader(
                fd: descriptor, path: characteristic.path, inboxes: consumerInboxes)
            log.record("consumer-acquired", ["consumer": consumer, "path": characteristic.path.rawValue])
            return true
        } catch {
            log.record(
                "consumer-acquire-failed",
                ["consumer": consumer, "path": characteristic.path.rawValue, "error": "\(error)"])
            return false
        }
    }

    /// Unsubscribes (StopNotify where it was the last subscriber); nothing if not subscribed.
    func unsubscribeConsumer(_ index: Int, name: String, key: PeripheralKey, app: RegisteredApplication) async
    {
        guard let connection, let sender = try? BusName(key.owner) else { return }
        var was = false
        for path in notifying(app) {
            let characteristic = PeripheralKey(owner: key.owner, path: path)
            guard subscribers[characteristic]?.remove(index) != nil else { continue }
            was = true
            consumerInboxes.unsubscribe(index, from: path)
            guard subscribers[characteristic]?.isEmpty == true, applications[key] != nil else { continue }
            // The last central gone: bluetoothd closes an acquired socket (io_destroy), else
            // StopNotify.
            if let reader = acquiredNotify.removeValue(forKey: characteristic) {
                reader.close()
                continue
            }
            _ = try? await connection.call(
                destination: sender, path: path, interface: BlueZName.gattCharacteristic,
                member: "StopNotify",
                timeout: Self.clientCallTimeout)
        }
        consumerInboxes.close(index)
        if was { log.record("consumer-unsubscribed", ["consumer": name]) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
