import DBus
import Synchronization

extension BlueZClient {
    /// Numbers the peripherals of this process, so that each has object paths of its own.
    private static let peripheralNumbers = Atomic<Int>(0)

    /// Whether `adapter` offers the LE peripheral role: `GattManager1` and `LEAdvertisingManager1`.
    public func offersPeripheral(_ adapter: Adapter) -> Bool {
        let path = adapter.path.objectPath
        return mirror.properties(path, BlueZNames.Peripheral.gattManager) != nil
            && mirror.properties(path, BlueZNames.Peripheral.advertisingManager) != nil
    }

    /// Serves `services` as a GATT application on `adapter` and advertises them as `advertisement`
    /// says, as bluetoothd 5.66 expects: the objects are exported under an object manager first,
    /// then RegisterApplication (bluetoothd reads them with GetManagedObjects before it replies),
    /// then RegisterAdvertisement. Every call is bounded by the client's timeout. Throws
    /// `.peripheralUnsupported` for an adapter without the two managers and `.peripheralRefused`
    /// when bluetoothd refuses either registration; nothing is left registered or exported then.
    public func registerPeripheral(
        _ services: [ServedService], advertisement: AdvertisementSettings, on adapter: Adapter
    ) async throws(BlueZError) -> Peripheral {
        guard offersPeripheral(adapter) else {
            throw BlueZError(
                .peripheralUnsupported,
                "the adapter \(adapter.name) cannot serve as a Bluetooth LE peripheral (bluetoothd offers no "
                    + "GattManager1 and LEAdvertisingManager1 on it)")
        }
        let number = Self.peripheralNumbers.add(1, ordering: .relaxed).newValue
        let peripheral: Peripheral
        do throws(DBusError) {
            peripheral = try exportApplication(services, advertisement, adapter, number)
        } catch {
            throw BlueZError(.dbus, "cannot export the GATT application: \(error.message)")
        }
        let calls: [(MemberName, InterfaceName, ObjectPath)] = [
            ("RegisterApplication", BlueZNames.Call.gattManager, peripheral.root),
            ("RegisterAdvertisement", BlueZNames.Call.advertisingManager, peripheral.advertisementPath),
        ]
        for (index, (member, interface, path)) in calls.enumerated() {
            do throws(BlueZError) {
                _ = try await call(
                    member, on: adapter.path.objectPath, interface: interface,
                    body: [.objectPath(path), .propertyMap([:])])
            } catch {
                if index > 0 {
                    _ = try? await call(
                        "UnregisterApplication", on: adapter.path.objectPath,
                        interface: BlueZNames.Call.gattManager,
                        body: [.objectPath(peripheral.root)])
                }
                peripheral.withdraw()
                throw Self.refusal(error, member: member.rawValue, adapter: adapter)
            }
        }
        logger.info(
            "serving a GATT application and an advertisement on \(adapter.name)",
            metadata: ["root": "\(peripheral.root)", "name": "\(advertisement.localName)"])
        return peripheral
    }

    /// A registration bluetoothd refused, said as what it means.
    static func refusal(_ error: BlueZError, member: String, adapter: Adapter) -> BlueZError {
        guard error.reply != nil else { return error }
        let what = member == "RegisterApplication" ? "the GATT application" : "the advertisement"
        return BlueZError(
            .peripheralRefused, "bluetoothd refused \(what) on \(adapter.name): \(error.message)",
            dbusName: error.dbusName)
    }

    private func exportApplication(
        _ services: [ServedService], _ advertisement: AdvertisementSettings, _ adapter: Adapter, _ number: Int
    ) throws(DBusError) -> Peripheral {
        let root = try ObjectPath("/org/hrm/peripheral\(number)")
        var served: [ServedCharacteristic] = []
        var paths: [ObjectPath] = []
        var servicePaths: [(ObjectPath, ServedService)] = []
        for (s, service) in services.enumerated() {
            let servicePath = try root.appending("service\(s)")
            servicePaths.append((servicePath, service))
            for (c, characteristic) in service.characteristics.enumerated() {
                served.append(characteristic)
                paths.append(try servicePath.appending("char\(c)"))
            }
        }
        let peripheral = Peripheral(
            adapter: adapter.path, connection: connection, root: root, advertisement: advertisement,
            advertisementPath: try root.appending("advertisement0"), characteristics: served, paths: paths,
            timeout: callTimeout, logger: logger)
        connection.addObjectManager(at: root)
        do throws(DBusError) {
            var index = 0
            for (servicePath, service) in servicePaths {
                try connection.export(
                    Self.servedServiceInterface, at: servicePath,
                    properties: [
                        "UUID": .string(service.uuid.description), "Primary": .boolean(true),
                        "Includes": .objectPaths([]),
                    ])
                for characteristic in service.characteristics {
                    let notifies = characteristic.flags.contains(.notify)
                    var properties: [String: Value] = [
                        "UUID": .string(characteristic.uuid.description),
                        "Service": .objectPath(servicePath),
                        "Flags": .strings(characteristic.flags.map(\.rawValue)),
                        "Value": .bytes(characteristic.value),
                    ]
                    // Its presence makes bluetoothd ask by AcquireNotify (a socket, no D-Bus
                    // message per value) instead of StartNotify.
                    if notifies { properties["NotifyAcquired"] = .boolean(false) }
                    try connection.export(
                        Self.characteristicInterface(peripheral, index, notifies: notifies), at: paths[index],
                        properties: properties)
                    index += 1
                }
            }
            try connection.export(
                Self.advertisementInterface(peripheral), at: peripheral.advertisementPath,
                properties: Self.advertisementProperties(advertisement))
        } catch {
            peripheral.withdraw()
            throw error
        }
        return peripheral
    }

    private static let servedServiceInterface = Interface(
        BlueZNames.Call.gattService,
        properties: [
            Property("UUID", type: .string, changes: .constant),
            Property("Primary", type: .boolean, changes: .constant),
            Property("Includes", type: .array(.objectPath), changes: .constant),
        ])

    private static func characteristicInterface(_ peripheral: Peripheral, _ index: Int, notifies: Bool)
        -> Interface
    {
        var methods = [
            Method("ReadValue", input: "a{sv}", output: "ay") { [weak peripheral] call in
                let options = (try? call.decode([String: Value].self)) ?? [:]
                var device: BluetoothAddress? = nil
                if case .objectPath(let path)? = options["device"]?.unwrapped {
                    device = BluetoothAddress(devicePath: path.rawValue)
                }
                return [.bytes(peripheral?.read(index, device: device) ?? [])]
            },
            Method("StartNotify") { [weak peripheral] _ in
                peripheral?.startNotify(index)
                return []
            },
            Method("StopNotify") { [weak peripheral] _ in
                peripheral?.stopNotify(index)
                return []
            },
        ]
        var properties = [
            Property("UUID", type: .string, changes: .constant),
            Property("Service", type: .objectPath, changes: .constant),
            Property("Flags", type: .array(.string), changes: .constant),
            Property("Value", type: .array(.byte)),
        ]
        if notifies {
            methods.append(
                Method("AcquireNotify", input: "a{sv}", output: "hq") { [weak peripheral] call in
                    guard let peripheral else {
                        throw DBusError(name: "org.bluez.Error.Failed", message: "the application is gone")
                    }
                    let options = (try? call.decode([String: Value].self)) ?? [:]
                    let mtu: UInt16 =
                        if case .uint16(let size)? = options["mtu"]?.unwrapped { size } else { 23 }
                    // bluetoothd's end, closed here once the reply has taken it.
                    let theirs = UnixFD(taking: try peripheral.acquireNotify(index))
                    call.afterReply { theirs.close() }
                    return [.unixFD(theirs), .uint16(mtu)]
                })
            properties.append(Property("NotifyAcquired", type: .boolean))
        }
        return Interface(BlueZNames.Call.characteristic, methods: methods, properties: properties)
    }

    /// The properties of `LEAdvertisement1` for `advertisement`.
    static func advertisementProperties(_ advertisement: AdvertisementSettings) -> [String: Value] {
        var properties: [String: Value] = [
            "Type": .string("peripheral"),
            "ServiceUUIDs": .strings(advertisement.serviceUUIDs.map(\.description)),
            "LocalName": .string(advertisement.localName), "Discoverable": .boolean(true),
        ]
        if let appearance = advertisement.appearance { properties["Appearance"] = .uint16(appearance) }
        return properties
    }

    static func advertisementInterface(_ peripheral: Peripheral) -> Interface {
        Interface(
            BlueZNames.Call.advertisement,
            methods: [
                Method("Release") { [weak peripheral] _ in
                    peripheral?.released()
                    return []
                }
            ],
            properties: [
                Property("Type", type: .string, changes: .constant),
                Property("ServiceUUIDs", type: .array(.string), changes: .constant),
                Property("LocalName", type: .string, changes: .constant),
                Property("Discoverable", type: .boolean, changes: .constant),
                Property("Appearance", type: .uint16, changes: .constant),
            ])
    }

    /// Whether `adapter` offers the LE peripheral role (`offersPeripheral`), each time that changes,
    /// the current answer first: false while bluetoothd is away, true again when it is back (the
    /// moment to register again). Ends when the client closes or the reader stops.
    public func peripheralRole(on adapter: AdapterPath) -> AsyncStream<Bool> {
        let (events, id) = watch()
        let (stream, continuation) = AsyncStream.makeStream(
            of: Bool.self, bufferingPolicy: .bufferingNewest(4))
        let path = adapter.objectPath
        let offered: @Sendable (ObjectMirror) -> Bool = { mirror in
            mirror.properties(path, BlueZNames.Peripheral.gattManager) != nil
                && mirror.properties(path, BlueZNames.Peripheral.advertisingManager) != nil
        }
        let first = offered(mirror)
        continuation.yield(first)
        let task = Task { [weak self] in
            var last = first
            for await _ in events {
                guard let mirror = await self?.mirror else { break }
                let now = offered(mirror)
                if now != last {
                    continuation.yield(now)
                    last = now
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in
            task.cancel()
            Task { await self?.unwatch(id) }
        }
        return stream
    }

    /// The addresses of the centrals connected to `adapter` (connected devices there that serve
    /// no Heart Rate service: a strap is a device hrm connected to, not a consumer), each time the
    /// set changes, the current set first. Ends when the client closes or the reader stops.
    public func centrals(on adapter: AdapterPath) -> AsyncStream<Set<BluetoothAddress>> {
        let (events, id) = watch()
        let (stream, continuation) = AsyncStream.makeStream(
            of: Set<BluetoothAddress>.self, bufferingPolicy: .bufferingNewest(16))
        let first = Self.centrals(in: mirror, on: adapter)
        continuation.yield(first)
        let task = Task { [weak self] in
            var last = first
            for await _ in events {
                guard let mirror = await self?.mirror else { break }
                let now = Self.centrals(in: mirror, on: adapter)
                if now != last {
                    continuation.yield(now)
                    last = now
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in
            task.cancel()
            Task { await self?.unwatch(id) }
        }
        return stream
    }

    static func centrals(in mirror: ObjectMirror, on adapter: AdapterPath) -> Set<BluetoothAddress> {
        let heartRate = BluetoothUUID(0x180D)
        var found = Set<BluetoothAddress>()
        for path in mirror.paths(with: deviceInterface) where path.parent == adapter.objectPath {
            guard let properties = mirror.properties(path, deviceInterface),
                properties["Connected"] == .boolean(true),
                case .string(let text)? = properties["Address"], let address = BluetoothAddress(text)
            else { continue }
            if case .array(.string, let uuids)? = properties["UUIDs"],
                uuids.contains(where: {
                    if case .string(let u) = $0 { BluetoothUUID(u) == heartRate } else { false }
                })
            {
                continue
            }
            found.insert(address)
        }
        return found
    }
}
