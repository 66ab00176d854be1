import BlueZ
import DBus
import HeartRate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A simulated bluetoothd: serves `org.bluez` on a bus as BlueZ 5.66 does, playing a scenario.
///
/// One actor owns all state; D-Bus method handlers and the timeline (appearances, drops,
/// notifications, power and restart events) go through it. What it sends follows the order real
/// bluetoothd uses (see shared/design/BLUEZ-NOTES.md): changes caused by a call go out before the
/// call's reply, device-found signals only after StartDiscovery's reply, Connected before Connect's
/// reply, ServicesResolved after (or, as the scenario says, before) the GATT objects' InterfacesAdded.
public actor Simulator {
    /// How long real bluetoothd takes for the slow steps, in seconds.
    public struct Timing: Sendable {
        public var connectReply = 0.03
        public var servicesResolved = 0.15
        public var disconnect = 2.0
        /// Connect() while discovering completes when discovery stops or the LE scan window ends.
        public var connectWhileDiscovering = 8.4
        /// How long Connect() waits for an unreachable device before failing.
        public var connectTimeout = 5.0
        /// Discovered devices never connected are dropped this long after they were last seen.
        public var temporaryTimeout = 30.0
        public var tick = 0.05

        public init() {}
    }

    struct AdapterState {
        let spec: Scenario.Adapter
        let path: ObjectPath
        var powered: Bool
        /// Clients (unique names) with a discovery session, and their filters.
        var discoveryClients: [String: DiscoveryClient] = [:]
        var discovering: Bool { discoveryClients.values.contains(where: \.started) }
    }

    /// A client of Adapter1's discovery: its filter (SetDiscoveryFilter) and whether it has
    /// called StartDiscovery. bluetoothd merges the filters of the clients discovering.
    struct DiscoveryClient {
        var filter: [String: Value] = [:]
        var started = false
    }

    struct DeviceState {
        let index: Int
        let spec: Scenario.Device
        let address: BluetoothAddress
        let path: ObjectPath
        let adapter: String
        let layout: GATTLayout
        var generator: HeartRateGenerator
        var exported = false
        var connected = false
        var servicesResolved = false
        var gattExported = false
        var failuresLeft: [Scenario.DBusFailure]
        /// A `stall` happened: Connect answers without connecting until a Disconnect.
        var stalled = false
        var lastSeen = 0.0
        var nextReport = 0.0
        /// Notifications sent to a client (by socket or signal), for drops tied to the stream.
        var notificationsSent = 0
        /// Drops asked for while running (`dropLink`), beside the scenario's.
        var extraDrops: [Scenario.Drop] = []
        var contactChangesDone = 0
        /// StartNotify sessions on 0x2A37 (and 0x2A19), by characteristic path: client names.
        var notifySessions: [String: Set<String>] = [:]
        /// AcquireNotify: characteristic path → our end of the socket pair.
        var acquired: [String: Int32] = [:]
        var notifyTask: Task<Void, Never>? = nil
        var battery: Int?
    }

    let scenario: Scenario
    let busAddress: String
    let log: SimulatorLog
    let timing: Timing
    var connection: Connection?
    var adapters: [String: AdapterState] = [:]
    var adapterOrder: [String] = []
    var devices: [ObjectPath: DeviceState] = [:]
    var eventsDone = 0
    /// When the last event happened (0: the start), for events `after` it.
    var lastEventAt = 0.0
    /// Notifications sent to clients by every strap, for events `afterNotifications`.
    var notificationsInAll = 0
    var down = false
    var timeline: Task<Void, Never>? = nil
    var watcher: Task<Void, Never>? = nil

    public init(scenario: Scenario, busAddress: String, log: SimulatorLog, timing: Timing = Timing()) {
        self.scenario = scenario
        self.busAddress = busAddress
        self.log = log
        self.timing = timing
        for adapter in scenario.adapters {
            adapters[adapter.name] = AdapterState(
                spec: adapter, path: ObjectPath(stringLiteral: "/org/bluez/\(adapter.name)"),
                powered: adapter.powered)
            adapterOrder.append(adapter.name)
        }
        for (index, spec) in scenario.devices.enumerated() {
            guard let address = BluetoothAddress(spec.address),
                let adapter = spec.adapter ?? scenario.adapters.first?.name
            else { continue }
            let path = ObjectPath(stringLiteral: "/org/bluez/\(adapter)/\(address.pathComponent)")
            let layout = GATTLayout(devicePath: path.rawValue, device: spec)
            devices[path] = DeviceState(
                index: index, spec: spec, address: address, path: path, adapter: adapter, layout: layout,
                generator: HeartRateGenerator(stream: spec.heartRate, maximumFrameLength: spec.mtu - 3),
                failuresLeft: spec.connectFailures, battery: spec.battery)
        }
    }

    /// Connects to the bus, takes the name org.bluez and plays the scenario until `stop()`.
    public func start() async throws {
        guard scenario.bluetoothd else {
            log.record("bluetoothd", ["running": false])
            return
        }
        try await serve()
        let tick = timing.tick
        timeline = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(tick))
                await self?.advance()
            }
        }
    }

    public func stop() async {
        timeline?.cancel()
        watcher?.cancel()
        for path in devices.keys { stopNotifying(path) }
        if let connection { await connection.close() }
        connection = nil
    }

    var now: Double { log.seconds }

    // MARK: - Serving

    func serve() async throws {
        let connection = try await Connection(address: busAddress)
        self.connection = connection
        connection.addObjectManager(at: .root, listingStandardInterfaces: true)
        try connection.export(
            Interface(
                BlueZName.agentManager,
                methods: [
                    method("RegisterAgent", input: "os") { _ in [] },
                    method("UnregisterAgent", input: "o") { _ in [] },
                    method("RequestDefaultAgent", input: "o") { _ in [] },
                ]), at: BlueZName.root)
        for name in adapterOrder {
            guard let adapter = adapters[name] else { continue }
            try connection.export(
                adapterInterface(), at: adapter.path, properties: adapterProperties(adapter))
        }
        for (path, device) in devices where device.spec.known {
            try exportDevice(path, rssi: false)
        }
        // Clients that leave the bus lose their discovery and notify sessions, as in bluetoothd.
        let leaving = try await connection.signals(
            matching: MatchRule(
                sender: .bus, interface: .bus, member: "NameOwnerChanged"))
        watcher = Task { [weak self] in
            for await message in leaving {
                guard message.body.count == 3, case .string(let name) = message.body[0],
                    case .string(let newOwner) = message.body[2], newOwner.isEmpty, name.hasPrefix(":")
                else { continue }
                await self?.clientLeft(name)
            }
        }
        let reply = try await connection.requestName(BlueZName.service)
        log.record("bluetoothd", ["running": true, "name": "\(reply)"])
    }

    /// Wraps a handler: logs the call and its outcome, turns non-D-Bus errors into Failed.
    nonisolated func method(
        _ name: MemberName, input: Signature? = .empty, output: Signature? = .empty,
        _ body: @escaping @Sendable (MethodCall) async throws -> [Value]
    ) -> Method {
        let log = self.log
        return Method(name, input: input, output: output) { call in
            // bluetoothd's main loop sees a closed notify socket before a call sent after closing it.
            await self.reapReleasedSockets()
            log.record(
                "call",
                [
                    "sender": call.sender?.rawValue ?? "", "path": call.path.rawValue,
                    "interface": call.interface?.rawValue ?? "", "member": name.rawValue,
                ])
            do {
                let result = try await body(call)
                log.record("reply", ["path": call.path.rawValue, "member": name.rawValue])
                return result
            } catch let error as DBusError {
                log.record(
                    "error",
                    [
                        "path": call.path.rawValue, "member": name.rawValue, "error": error.name.rawValue,
                        "message": error.message,
                    ])
                throw error
            }
        }
    }

    // MARK: - Adapter1

    nonisolated func adapterInterface() -> Interface {
        Interface(
            BlueZName.adapter,
            methods: [
                method("StartDiscovery") { call in try await self.startDiscovery(call) },
                method("StopDiscovery") { call in try await self.stopDiscovery(call) },
                method("SetDiscoveryFilter", input: "a{sv}") { call in try await self.setDiscoveryFilter(call)
                },
                method("GetDiscoveryFilters", output: "as") { _ in
                    [
                        .strings([
                            "UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable",
                            "Pattern",
                        ])
                    ]
                },
                method("RemoveDevice", input: "o") { call in try await self.removeDevice(call) },
            ],
            properties: [
                Property("Address", type: .string, changes: .constant),
                Property("AddressType", type: .string, changes: .constant),
                Property("Name", type: .string),
                Property("Alias", type: .string, access: .readWrite),
                Property("Class", type: .uint32),
                Property("Powered", type: .boolean, access: .readWrite) { value, call in
                    guard case .boolean(let on) = value else { throw BlueZError.invalidArguments }
                    try await self.setPowered(adapterPath: call.path, on)  // the connection announces Powered
                    return value
                },
                Property("PowerState", type: .string),
                Property("Discoverable", type: .boolean, access: .readWrite),
                Property("DiscoverableTimeout", type: .uint32, access: .readWrite),
                Property("Pairable", type: .boolean, access: .readWrite),
                Property("PairableTimeout", type: .uint32, access: .readWrite),
                Property("Discovering", type: .boolean),
                Property("UUIDs", type: .array(.string)),
                Property("Modalias", type: .string),
                Property("Roles", type: .array(.string)),
            ])
    }

    func adapterProperties(_ adapter: AdapterState) -> [String: Value] {
        [
            "Address": .string(adapter.spec.address.uppercased()), "AddressType": .string("public"),
            "Name": .string(adapter.spec.alias ?? "hrm-sim"),
            "Alias": .string(adapter.spec.alias ?? "hrm-sim"),
            "Class": .uint32(0), "Powered": .boolean(adapter.powered),
            "PowerState": .string(adapter.powered ? "on" : "off"), "Discoverable": .boolean(false),
            "DiscoverableTimeout": .uint32(180), "Pairable": .boolean(false), "PairableTimeout": .uint32(0),
            "Discovering": .boolean(false),
            "UUIDs": .strings([
                "00001801-0000-1000-8000-00805f9b34fb", "00001800-0000-1000-8000-00805f9b34fb",
            ]),
            "Modalias": .string("usb:v1D6Bp0246d0542"), "Roles": .strings(["central", "peripheral"]),
        ]
    }

    func adapterName(_ path: ObjectPath) -> String? {
        adapters.first { $0.value.path == path }?.key
    }

    func startDiscovery(_ call: MethodCall) throws -> [Value] {
        guard let name = adapterName(call.path), var adapter = adapters[name] else {
            throw BlueZError.doesNotExist
        }
        guard adapter.powered else { throw BlueZError.notReady }
        let client = call.sender?.rawValue ?? ""
        if adapter.discoveryClients[client]?.started == true { throw BlueZError.alreadyInProgress }
        let wasDiscovering = adapter.discovering
        adapter.discoveryClients[client, default: DiscoveryClient()].started = true
        adapters[name] = adapter
        if !wasDiscovering {
            // Discovering and the device-found signals follow the reply.
            call.afterReply { Task { await self.discoveryStarted(name) } }
        }
        return []
    }

    func discoveryStarted(_ name: String) {
        guard let adapter = adapters[name] else { return }
        try? connection?.setProperty(
            "Discovering", to: .boolean(true), interface: BlueZName.adapter, at: adapter.path)
        for path in devices.keys where devices[path]?.adapter == name { devices[path]?.nextReport = now }
        advance()
    }

    func stopDiscovery(_ call: MethodCall) throws -> [Value] {
        guard let name = adapterName(call.path), adapters[name] != nil else { throw BlueZError.doesNotExist }
        let client = call.sender?.rawValue ?? ""
        guard adapters[name]?.discoveryClients[client]?.started == true else {
            throw BlueZError.failed("No discovery started")
        }
        adapters[name]?.discoveryClients[client] = nil
        endDiscoveryIfIdle(name)
        return []
    }

    func endDiscoveryIfIdle(_ name: String) {
        guard let adapter = adapters[name], !adapter.discovering else { return }
        // RSSI and TxPower are dropped when discovery stops.
        for (path, device) in devices where device.adapter == name && device.exported {
            if device.spec.rssi != nil || device.spec.txPower != nil {
                try? connection?.setProperties(
                    ["RSSI": nil, "TxPower": nil], interface: BlueZName.device, at: path)
            }
        }
        try? connection?.setProperty(
            "Discovering", to: .boolean(false), interface: BlueZName.adapter, at: adapter.path)
    }

    func setDiscoveryFilter(_ call: MethodCall) throws -> [Value] {
        guard let name = adapterName(call.path) else { throw BlueZError.doesNotExist }
        let (options) = try call.decode([String: Value].self)
        let known: Set<String> = [
            "UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern",
        ]
        guard options.keys.allSatisfy(known.contains) else { throw BlueZError.invalidArguments }
        if let uuids = options["UUIDs"] {
            guard case .array(.string, let items) = uuids.unwrapped,
                items.allSatisfy({ if case .string(let s) = $0 { BluetoothUUID(s) != nil } else { false } })
            else { throw BlueZError.invalidArguments }
        }
        let client = call.sender?.rawValue ?? ""
        var entry = adapters[name]?.discoveryClients[client] ?? DiscoveryClient()
        entry.filter = options
        // An empty filter resets it; a client with neither filter nor discovery is forgotten.
        adapters[name]?.discoveryClients[client] = entry.filter.isEmpty && !entry.started ? nil : entry
        return []
    }

    func removeDevice(_ call: MethodCall) async throws -> [Value] {
        let (path) = try call.decode(ObjectPath.self)
        guard let device = devices[path], device.exported else { throw BlueZError.doesNotExist }
        if device.connected { await disconnect(path, reason: "removed") }
        unexportGATT(path)
        connection?.unexport(at: path)
        devices[path]?.exported = false
        return []
    }

    func setPowered(adapterPath: ObjectPath, _ on: Bool) async throws {
        guard let name = adapterName(adapterPath) else { throw BlueZError.doesNotExist }
        try await power(name, on, announce: false)
    }

    /// Powers an adapter off or on; `announce` also emits Powered (a remote Set has it emitted by
    /// the connection instead).
    func power(_ name: String, _ on: Bool, announce: Bool = true) async throws {
        guard let adapter = adapters[name], adapter.powered != on else { return }
        log.record("power", ["adapter": name, "powered": on])
        if !on {
            for (path, device) in devices where device.adapter == name && device.connected {
                linkLost(path, reason: "power-off")
            }
            adapters[name]?.discoveryClients = [:]
            var changes: [String: Value?] = ["Discovering": .boolean(false), "PowerState": .string("off")]
            if announce { changes["Powered"] = .boolean(false) }
            announceAdapter(changes, adapter.path)
        } else {
            var changes: [String: Value?] = ["PowerState": .string("on")]
            if announce { changes["Powered"] = .boolean(true) }
            announceAdapter(changes, adapter.path)
        }
        adapters[name]?.powered = on
    }

    func announceAdapter(_ changes: [String: Value?], _ path: ObjectPath) {
        do {
            try connection?.setProperties(changes, interface: BlueZName.adapter, at: path)
        } catch {
            log.record("internal-error", ["what": "\(error)"])
        }
    }

    // MARK: - Device1

    nonisolated func deviceInterface() -> Interface {
        Interface(
            BlueZName.device,
            methods: [
                method("Connect") { call in try await self.connect(call) },
                method("Disconnect") { call in try await self.disconnectCall(call) },
                method("ConnectProfile", input: "s") { _ in throw BlueZError.notSupported },
                method("DisconnectProfile", input: "s") { _ in throw BlueZError.notSupported },
                method("Pair") { _ in throw BlueZError.notSupported },
                method("CancelPairing") { _ in throw BlueZError.doesNotExist },
            ],
            properties: [
                Property("Address", type: .string, changes: .constant),
                Property("AddressType", type: .string),
                Property("Name", type: .string),
                Property("Alias", type: .string, access: .readWrite),
                Property("Appearance", type: .uint16),
                Property("Icon", type: .string),
                Property("Paired", type: .boolean),
                Property("Bonded", type: .boolean),
                Property("Trusted", type: .boolean, access: .readWrite),
                Property("Blocked", type: .boolean, access: .readWrite),
                Property("LegacyPairing", type: .boolean),
                Property("RSSI", type: .int16),
                Property("TxPower", type: .int16),
                Property("Connected", type: .boolean),
                Property("UUIDs", type: .array(.string)),
                Property("Modalias", type: .string),
                Property("Adapter", type: .objectPath),
                Property("ManufacturerData", type: .dictionary(key: .uint16, value: .variant)),
                Property("ServicesResolved", type: .boolean),
            ])
    }

    func deviceProperties(_ device: DeviceState, rssi: Bool) -> [String: Value] {
        let spec = device.spec
        var properties: [String: Value] = [
            "Address": .string(device.address.description), "AddressType": .string(spec.addressType),
            "Alias": .string(spec.name ?? device.address.description.replacingColons()),
            "Paired": .boolean(false), "Bonded": .boolean(false), "Trusted": .boolean(false),
            "Blocked": .boolean(false), "LegacyPairing": .boolean(false),
            "Connected": .boolean(device.connected),
            "UUIDs": .strings(spec.uuids.compactMap { BluetoothUUID($0)?.description }),
            "Adapter": .objectPath(adapters[device.adapter]?.path ?? BlueZName.root),
            "ServicesResolved": .boolean(device.servicesResolved),
        ]
        if let name = spec.name { properties["Name"] = .string(name) }
        if let appearance = spec.appearance {
            properties["Appearance"] = .uint16(UInt16(clamping: appearance))
        }
        if rssi, let value = spec.rssi { properties["RSSI"] = .int16(Int16(clamping: value)) }
        if rssi, let value = spec.txPower { properties["TxPower"] = .int16(Int16(clamping: value)) }
        let data = spec.manufacturerData.compactMap { key, hex -> (UInt16, [UInt8])? in
            guard let id = Scenario.companyID(key), let bytes = Scenario.bytes(hex: hex) else { return nil }
            return (id, bytes)
        }
        if !data.isEmpty { properties["ManufacturerData"] = .manufacturerData(data) }
        return properties
    }

    func exportDevice(_ path: ObjectPath, rssi: Bool) throws {
        guard let device = devices[path], let connection else { return }
        try connection.export(deviceInterface(), at: path, properties: deviceProperties(device, rssi: rssi))
        devices[path]?.exported = true
        devices[path]?.lastSeen = now
        log.record("device-found", ["path": path.rawValue])
    }

    func reachable(_ device: DeviceState, at time: Double) -> Bool {
        guard time >= device.spec.appearAt else { return false }
        if let vanish = device.spec.vanishAt, time >= vanish { return false }
        return !(device.spec.drops + device.extraDrops).contains { drop in
            drop.at.map { time >= $0 && time < $0 + drop.for } ?? false
        }
    }

    func connect(_ call: MethodCall) async throws -> [Value] {
        let path = call.path
        guard let device = devices[path], device.exported else { throw BlueZError.doesNotExist }
        guard adapters[device.adapter]?.powered == true else { throw BlueZError.notReady }
        if device.connected || device.stalled { return [] }
        if let failure = device.failuresLeft.first {
            devices[path]?.failuresLeft.removeFirst()
            if failure.stall {
                devices[path]?.stalled = true
                log.record("connect-stalled", ["path": path.rawValue])
                return []
            }
            try await Task.sleep(for: .seconds(timing.connectReply))
            throw DBusError(name: ErrorName(stringLiteral: failure.error), message: failure.message)
        }
        // The kernel connects through passive scanning: while a discovery runs, Connect completes
        // only when it stops or the LE scan window ends.
        let started = now
        while adapters[device.adapter]?.discovering == true && now - started < timing.connectWhileDiscovering
        {
            try await Task.sleep(for: .seconds(timing.tick))
        }
        while !reachable(device, at: now) {
            guard now - started < timing.connectTimeout else {
                throw BlueZError.failed("le-connection-abort-by-local")
            }
            try await Task.sleep(for: .seconds(timing.tick))
        }
        try await Task.sleep(for: .seconds(timing.connectReply))
        guard devices[path]?.connected == false else { return [] }
        devices[path]?.connected = true
        log.record("state", ["path": path.rawValue, "connected": true])
        // Connected goes out before the reply, as bluetoothctl shows ("Connected: yes", then
        // "Connection successful"); bleak's mirror must say connected when the reply arrives.
        try? connection?.setProperties(["Connected": .boolean(true)], interface: BlueZName.device, at: path)
        call.afterReply {
            Task { await self.connected(path) }
        }
        return []
    }

    func connected(_ path: ObjectPath) async {
        guard devices[path]?.connected == true else { return }
        exportReverseDevice(path)
        try? await Task.sleep(for: .seconds(timing.servicesResolved))
        guard let device = devices[path], device.connected else { return }
        let objectsFirst = scenario.servicesResolved == .afterObjects
        if objectsFirst { exportGATT(path) }
        let uuids = (device.layout.serviceUUIDs + device.spec.uuids.compactMap { BluetoothUUID($0) })
        let unique = Array(Set(uuids)).sorted().map(\.description)
        try? connection?.setProperties(
            ["UUIDs": .strings(unique), "ServicesResolved": .boolean(true)], interface: BlueZName.device,
            at: path)
        devices[path]?.servicesResolved = true
        if !objectsFirst { exportGATT(path) }
        // The Device Information service's PnP ID gives the device a Modalias, as in bluetoothd.
        try? connection?.setProperty(
            "Modalias", to: .string("usb:v1D6Bp0246d0542"), interface: BlueZName.device, at: path)
        if let battery = device.battery {
            try? connection?.export(
                Interface(
                    BlueZName.battery,
                    properties: [Property("Percentage", type: .byte), Property("Source", type: .string)]),
                at: path,
                properties: ["Percentage": .byte(UInt8(clamping: battery)), "Source": .string("GATT")])
        }
        // bluetoothd re-enables the notify sessions of clients still on the bus.
        for (charPath, clients) in device.notifySessions where !clients.isEmpty {
            try? connection?.setProperty(
                "Notifying", to: .boolean(true), interface: BlueZName.gattCharacteristic,
                at: ObjectPath(stringLiteral: charPath))
        }
        startNotifying(path)
    }

    func disconnectCall(_ call: MethodCall) async throws -> [Value] {
        let path = call.path
        guard devices[path]?.exported == true else { throw BlueZError.doesNotExist }
        if devices[path]?.stalled == true {
            devices[path]?.stalled = false
            log.record("stall-cleared", ["path": path.rawValue])
        }
        guard devices[path]?.connected == true else { return [] }
        await disconnect(path, reason: "local", call: call)
        return []
    }

    /// A local Disconnect(): Battery1 goes at once; ~2 s later ServicesResolved false, the reply,
    /// then Connected false and the notify sockets' end.
    func disconnect(_ path: ObjectPath, reason: String, call: MethodCall? = nil) async {
        connection?.unexport([BlueZName.battery], at: path)
        stopNotifying(path)
        try? await Task.sleep(for: .seconds(timing.disconnect))
        guard devices[path]?.connected == true else { return }
        try? connection?.setProperty(
            "ServicesResolved", to: .boolean(false), interface: BlueZName.device, at: path)
        devices[path]?.servicesResolved = false
        devices[path]?.connected = false
        log.record("state", ["path": path.rawValue, "connected": false, "reason": reason])
        let finish: @Sendable () -> Void = { Task { await self.disconnected(path) } }
        if let call { call.afterReply(finish) } else { finish() }
    }

    func disconnected(_ path: ObjectPath) {
        try? connection?.setProperty("Connected", to: .boolean(false), interface: BlueZName.device, at: path)
        releaseLinkState(path)
    }

    /// A link drop: the notify sockets end first, then one PropertiesChanged with
    /// {ServicesResolved: false, Connected: false}, then Battery1 goes, then NotifyAcquired false.
    func linkLost(_ path: ObjectPath, reason: String) {
        guard devices[path]?.connected == true else { return }
        stopNotifying(path)
        closeAcquired(path, announce: false)
        devices[path]?.connected = false
        devices[path]?.servicesResolved = false
        log.record("drop", ["path": path.rawValue, "reason": reason])
        try? connection?.setProperties(
            ["ServicesResolved": .boolean(false), "Connected": .boolean(false)], interface: BlueZName.device,
            at: path)
        connection?.unexport([BlueZName.battery], at: path)
        releaseLinkState(path)
    }

    func releaseLinkState(_ path: ObjectPath) {
        guard let device = devices[path] else { return }
        if let reverse = reverseDevicePath(path) { connection?.unexport(at: reverse) }
        for characteristic in device.layout.characteristics
        where characteristic.role == .measurement
            || characteristic.role == .batteryLevel
        {
            let charPath = ObjectPath(stringLiteral: characteristic.path)
            if device.acquired[characteristic.path] != nil
                || connection?.property(
                    "NotifyAcquired", interface: BlueZName.gattCharacteristic, at: charPath) == .boolean(true)
            {
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: charPath)
            }
            if connection?.property("Notifying", interface: BlueZName.gattCharacteristic, at: charPath)
                == .boolean(true)
            {
                try? connection?.setProperty(
                    "Notifying", to: .boolean(false), interface: BlueZName.gattCharacteristic, at: charPath)
            }
        }
        closeAcquired(path, announce: false)
        if scenario.gattCache == .no { unexportGATT(path) }
    }

    /// When the peripheral is itself one of the simulated adapters (the lab: hci0 connects to
    /// hci1), bluetoothd also shows the central as a device of the peripheral's adapter:
    /// `/org/bluez/hci1/dev_<hci0's address>`. Clients must filter Device1 objects by `Adapter`.
    func reverseDevicePath(_ path: ObjectPath) -> ObjectPath? {
        guard let device = devices[path],
            let peripheral = adapters.values.first(where: {
                BluetoothAddress($0.spec.address) == device.address
            }),
            let central = adapters[device.adapter],
            let centralAddress = BluetoothAddress(central.spec.address)
        else { return nil }
        return ObjectPath(stringLiteral: "\(peripheral.path.rawValue)/\(centralAddress.pathComponent)")
    }

    func exportReverseDevice(_ path: ObjectPath) {
        guard let reverse = reverseDevicePath(path), let central = adapters[devices[path]?.adapter ?? ""],
            let address = BluetoothAddress(central.spec.address),
            let peripheralPath = reverse.parent
        else { return }
        let dashed = address.description.replacingColons()
        try? connection?.export(
            deviceInterface(), at: reverse,
            properties: [
                "Address": .string(address.description), "AddressType": .string("public"),
                "Alias": .string(dashed),
                "Paired": .boolean(false), "Bonded": .boolean(false), "Trusted": .boolean(false),
                "Blocked": .boolean(false), "LegacyPairing": .boolean(false), "Connected": .boolean(true),
                "UUIDs": .strings([]), "Adapter": .objectPath(peripheralPath),
                "ServicesResolved": .boolean(false),
            ])
    }

    // MARK: - GATT objects

    nonisolated func serviceInterface() -> Interface {
        Interface(
            BlueZName.gattService,
            properties: [
                Property("UUID", type: .string, changes: .constant),
                Property("Device", type: .objectPath, changes: .constant),
                Property("Primary", type: .boolean, changes: .constant),
                Property("Includes", type: .array(.objectPath)),
            ])
    }

    nonisolated func characteristicInterface() -> Interface {
        Interface(
            BlueZName.gattCharacteristic,
            methods: [
                method("ReadValue", input: "a{sv}", output: "ay") { call in try await self.readValue(call) },
                method("WriteValue", input: "aya{sv}") { call in try await self.writeValue(call) },
                method("StartNotify") { call in try await self.startNotify(call) },
                method("StopNotify") { call in try await self.stopNotify(call) },
                method("AcquireNotify", input: "a{sv}", output: "hq") { call in
                    try await self.acquireNotify(call)
                },
                method("AcquireWrite", input: "a{sv}", output: "hq") { _ in throw BlueZError.notSupported },
            ],
            properties: [
                Property("UUID", type: .string, changes: .constant),
                Property("Service", type: .objectPath, changes: .constant),
                Property("Value", type: .array(.byte)),
                Property("Notifying", type: .boolean),
                Property("Flags", type: .array(.string)),
                Property("NotifyAcquired", type: .boolean),
                Property("MTU", type: .uint16),
            ])
    }

    nonisolated func descriptorInterface() -> Interface {
        Interface(
            BlueZName.gattDescriptor,
            methods: [
                method("ReadValue", input: "a{sv}", output: "ay") { call in
                    try await self.readDescriptor(call)
                },
                method("WriteValue", input: "aya{sv}") { _ in throw BlueZError.notPermittedWrite },
            ],
            properties: [
                Property("UUID", type: .string, changes: .constant),
                Property("Characteristic", type: .objectPath, changes: .constant),
                Property("Value", type: .array(.byte)),
            ])
    }

    func exportGATT(_ path: ObjectPath) {
        guard let device = devices[path], !device.gattExported, let connection else { return }
        for service in device.layout.services {
            try? connection.export(
                serviceInterface(), at: ObjectPath(stringLiteral: service.path),
                properties: [
                    "UUID": .string(service.uuid.description), "Device": .objectPath(path),
                    "Primary": .boolean(true),
                    "Includes": .objectPaths([]),
                ])
            for characteristic in service.characteristics {
                var properties: [String: Value] = [
                    "UUID": .string(characteristic.uuid.description),
                    "Service": .objectPath(ObjectPath(stringLiteral: service.path)), "Value": .bytes([]),
                    "Flags": .strings(characteristic.flags),
                    "MTU": .uint16(UInt16(clamping: device.spec.mtu)),
                ]
                if characteristic.canNotify {
                    properties["Notifying"] = .boolean(false)
                    if characteristic.flags.contains("notify") {
                        properties["NotifyAcquired"] = .boolean(false)
                    }
                }
                try? connection.export(
                    characteristicInterface(), at: ObjectPath(stringLiteral: characteristic.path),
                    properties: properties)
                if let ccc = characteristic.ccc {
                    try? connection.export(
                        descriptorInterface(), at: ObjectPath(stringLiteral: ccc.path),
                        properties: [
                            "UUID": .string(ccc.uuid.description),
                            "Characteristic": .objectPath(ObjectPath(stringLiteral: characteristic.path)),
                            "Value": .bytes([]),
                        ])
                }
            }
        }
        devices[path]?.gattExported = true
    }

    /// Removes the GATT objects, children first (as bluetoothd does with Cache = no).
    func unexportGATT(_ path: ObjectPath) {
        guard let device = devices[path], device.gattExported, let connection else { return }
        for service in device.layout.services.reversed() {
            for characteristic in service.characteristics.reversed() {
                if let ccc = characteristic.ccc {
                    connection.unexport(at: ObjectPath(stringLiteral: ccc.path))
                }
                connection.unexport(at: ObjectPath(stringLiteral: characteristic.path))
            }
            connection.unexport(at: ObjectPath(stringLiteral: service.path))
        }
        devices[path]?.gattExported = false
        // The notify sessions lived on the characteristic objects (Cache = no): they are gone too.
        devices[path]?.notifySessions = [:]
    }

    /// The device and characteristic a GATT call is about.
    func characteristic(at path: ObjectPath) throws -> (ObjectPath, GATTLayout.Characteristic) {
        for (devicePath, device) in devices where path.isDescendant(of: devicePath) {
            if let characteristic = device.layout.characteristics.first(where: { $0.path == path.rawValue }) {
                guard device.gattExported else { throw BlueZError.doesNotExist }
                return (devicePath, characteristic)
            }
        }
        throw BlueZError.doesNotExist
    }

    func readValue(_ call: MethodCall) throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        guard characteristic.flags.contains("read") else { throw BlueZError.notPermittedRead }
        guard let device = devices[devicePath], device.connected else { throw BlueZError.notConnected }
        let value: [UInt8] =
            switch characteristic.role {
            case .bodySensorLocation: [UInt8(clamping: device.spec.location ?? 0)]
            case .batteryLevel: [UInt8(clamping: device.battery ?? 0)]
            case .deviceInformation(let text): Array(text.utf8)
            case .pnpID: [0x02, 0x6B, 0x1D, 0x46, 0x02, 0x42, 0x05]
            case .clientFeatures: [0x00]
            case .databaseHash: Array(repeating: 0xA5, count: 16)
            case .serverFeatures: [0x01]
            case .measurement, .controlPoint, .serviceChanged: []
            }
        // The read updates Value, and that PropertiesChanged goes out before the reply.
        try? connection?.setProperty(
            "Value", to: .bytes(value), interface: BlueZName.gattCharacteristic, at: call.path)
        return [.bytes(value)]
    }

    func readDescriptor(_ call: MethodCall) throws -> [Value] {
        guard let charPath = call.path.parent else { throw BlueZError.doesNotExist }
        let (devicePath, characteristic) = try characteristic(at: charPath)
        guard devices[devicePath]?.connected == true else { throw BlueZError.notConnected }
        let on =
            !(devices[devicePath]?.notifySessions[characteristic.path] ?? []).isEmpty
            || devices[devicePath]?.acquired[characteristic.path] != nil
        let value: [UInt8] = on ? [0x01, 0x00] : [0x00, 0x00]
        try? connection?.setProperty(
            "Value", to: .bytes(value), interface: BlueZName.gattDescriptor, at: call.path)
        return [.bytes(value)]
    }

    func writeValue(_ call: MethodCall) throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        guard
            characteristic.flags.contains("write") || characteristic.flags.contains("write-without-response")
        else { throw BlueZError.notSupported }
        guard devices[devicePath]?.connected == true else { throw BlueZError.notConnected }
        let (bytes, _) = try call.decode([UInt8].self, [String: Value].self)
        switch characteristic.role {
        case .controlPoint:
            guard bytes == HeartRateControlPoint.resetEnergyExpended.encoded else {
                throw BlueZError.failed("Operation failed with ATT error: 0x80")
            }
            devices[devicePath]?.generator.resetEnergyExpended()
            log.record("energy-reset", ["path": devicePath.rawValue])
        default:
            break
        }
        return []
    }

    func startNotify(_ call: MethodCall) throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        guard characteristic.canNotify else { throw BlueZError.notSupported }
        guard let device = devices[devicePath] else { throw BlueZError.doesNotExist }
        guard device.acquired[characteristic.path] == nil else { throw BlueZError.inProgress }
        let client = call.sender?.rawValue ?? ""
        var sessions = device.notifySessions[characteristic.path] ?? []
        guard !sessions.contains(client) else { throw BlueZError.alreadyInProgress }
        sessions.insert(client)
        devices[devicePath]?.notifySessions[characteristic.path] = sessions
        if sessions.count == 1 && device.connected {
            try? connection?.setProperty(
                "Notifying", to: .boolean(true), interface: BlueZName.gattCharacteristic, at: call.path)
        }
        return []
    }

    func stopNotify(_ call: MethodCall) throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        let client = call.sender?.rawValue ?? ""
        guard devices[devicePath]?.notifySessions[characteristic.path]?.remove(client) != nil else {
            throw BlueZError.failed("No notify session started")
        }
        if devices[devicePath]?.notifySessions[characteristic.path]?.isEmpty == true {
            try? connection?.setProperty(
                "Notifying", to: .boolean(false), interface: BlueZName.gattCharacteristic, at: call.path)
        }
        return []
    }

    func acquireNotify(_ call: MethodCall) throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        guard characteristic.flags.contains("notify") else { throw BlueZError.notSupported }
        guard let device = devices[devicePath], device.connected else { throw BlueZError.notConnected }
        guard (device.notifySessions[characteristic.path] ?? []).isEmpty else { throw BlueZError.inProgress }
        guard device.acquired[characteristic.path] == nil else { throw BlueZError.notPermittedAcquired }
        var pair: [Int32] = [-1, -1]
        guard
            socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
        else {
            throw BlueZError.failed("socketpair: errno \(errno)")
        }
        let flags = fcntl(pair[0], F_GETFL)
        _ = fcntl(pair[0], F_SETFL, flags | O_NONBLOCK)
        devices[devicePath]?.acquired[characteristic.path] = pair[0]
        try? connection?.setProperty(
            "NotifyAcquired", to: .boolean(true), interface: BlueZName.gattCharacteristic, at: call.path)
        return [.unixFD(UnixFD(taking: pair[1])), .uint16(UInt16(clamping: device.spec.mtu))]
    }

    /// Closes our ends of the acquired sockets: the client reads end of file.
    func closeAcquired(_ path: ObjectPath, announce: Bool) {
        guard let acquired = devices[path]?.acquired else { return }
        for (charPath, fd) in acquired {
            close(fd)
            if announce {
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: ObjectPath(stringLiteral: charPath))
            }
        }
        devices[path]?.acquired = [:]
    }

    // MARK: - Notifications

    func startNotifying(_ path: ObjectPath) {
        guard let device = devices[path] else { return }
        device.notifyTask?.cancel()
        let interval = device.spec.heartRate.interval
        devices[path]?.notifyTask = Task { [weak self] in
            let clock = ContinuousClock()
            var next = clock.now + .seconds(interval)
            while !Task.isCancelled {
                try? await clock.sleep(until: next)
                if Task.isCancelled { return }
                await self?.notify(path)
                next += .seconds(interval)
            }
        }
    }

    func stopNotifying(_ path: ObjectPath) {
        devices[path]?.notifyTask?.cancel()
        devices[path]?.notifyTask = nil
    }

    func notify(_ path: ObjectPath) {
        guard var device = devices[path], device.connected, device.servicesResolved,
            let measurement = device.layout.characteristics.first(where: { $0.role == .measurement })
        else { return }
        let t = now
        let changes = device.spec.heartRate.contactChanges
        while device.contactChangesDone < changes.count && changes[device.contactChangesDone].at <= t {
            if let contact = Scenario.HeartRateStream.contact(changes[device.contactChangesDone].contact) {
                device.generator.contact = contact
            }
            device.contactChangesDone += 1
        }
        let frame = device.generator.next(at: t)
        devices[path] = device
        let hex = frame.map { String($0, radix: 16).leftPadded(2) }.joined()
        var delivered = false
        if let fd = device.acquired[measurement.path] {
            let sentAt = SimulatorLog.monotonicNanoseconds()
            let sent = frame.withUnsafeBytes { send(fd, $0.baseAddress, frame.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && (errno == EPIPE || errno == ECONNRESET) {
                // The client closed its end: the acquisition is over.
                close(fd)
                devices[path]?.acquired[measurement.path] = nil
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: ObjectPath(stringLiteral: measurement.path))
                log.record("acquire-released", ["path": measurement.path])
            } else {
                delivered = sent >= 0
                log.record(
                    "notify",
                    ["path": measurement.path, "via": "fd", "hex": hex, "sent": sent >= 0, "mono_ns": sentAt])
            }
        }
        if !(device.notifySessions[measurement.path] ?? []).isEmpty {
            let sentAt = SimulatorLog.monotonicNanoseconds()
            try? connection?.setProperty(
                "Value", to: .bytes(frame), interface: BlueZName.gattCharacteristic,
                at: ObjectPath(stringLiteral: measurement.path))
            log.record("notify", ["path": measurement.path, "via": "signal", "hex": hex, "mono_ns": sentAt])
            delivered = true
        }
        if delivered { notificationSent(path) }
    }

    /// Counts a notification sent and starts what the scenario ties to that count: the strap's
    /// drops, and events.
    func notificationSent(_ path: ObjectPath) {
        guard let device = devices[path] else { return }
        let count = device.notificationsSent + 1
        devices[path]?.notificationsSent = count
        notificationsInAll += 1
        for drop in device.spec.drops where drop.afterNotifications == count {
            devices[path]?.extraDrops.append(Scenario.Drop(at: now, for: drop.for))
            linkLost(path, reason: "link")
        }
        runEvents(until: now)
    }

    // MARK: - Timeline

    func clientLeft(_ name: String) {
        for adapterName in adapterOrder where adapters[adapterName]?.discoveryClients[name] != nil {
            adapters[adapterName]?.discoveryClients[name] = nil
            endDiscoveryIfIdle(adapterName)
        }
        for (path, device) in devices {
            for (charPath, clients) in device.notifySessions where clients.contains(name) {
                devices[path]?.notifySessions[charPath]?.remove(name)
                if devices[path]?.notifySessions[charPath]?.isEmpty == true {
                    try? connection?.setProperty(
                        "Notifying", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                        at: ObjectPath(stringLiteral: charPath))
                }
            }
        }
        log.record("client-left", ["name": name])
    }

    /// One step of the scenario's timeline.
    func advance() {
        guard !down else { return }
        let t = now
        runEvents(until: t)
        for (path, device) in devices {
            guard let adapter = adapters[device.adapter] else { continue }
            // Drops, vanishing.
            if device.connected && !reachable(device, at: t) {
                linkLost(path, reason: "link")
                continue
            }
            // Discovery: appear, report RSSI.
            let started = adapter.discovering
            if started && !device.connected && reachable(device, at: t) && passesFilters(device, adapter) {
                if !device.exported {
                    try? exportDevice(path, rssi: true)
                    devices[path]?.nextReport = t + 1
                } else if t >= device.nextReport {
                    devices[path]?.lastSeen = t
                    devices[path]?.nextReport = t + 1
                    let filtered = adapter.discoveryClients.values.contains {
                        $0.started && !$0.filter.isEmpty
                    }
                    if filtered, let rssi = device.spec.rssi {
                        try? connection?.setProperty(
                            "RSSI", to: .int16(Int16(clamping: rssi)), interface: BlueZName.device, at: path)
                    }
                }
            }
            // Temporary devices are forgotten ~30 s after they were last seen.
            if device.exported && !device.connected && !device.spec.known && !started
                && t - device.lastSeen > timing.temporaryTimeout
            {
                unexportGATT(path)
                connection?.unexport(at: path)
                devices[path]?.exported = false
                log.record("device-removed", ["path": path.rawValue])
            }
            reapReleasedSockets(path)
        }
    }

    /// Notices clients that closed their acquired sockets. bluetoothd watches the socket and
    /// sees the hang-up at once; the simulator looks on every tick and before handling any call.
    func reapReleasedSockets() {
        for path in devices.keys { reapReleasedSockets(path) }
    }

    func reapReleasedSockets(_ path: ObjectPath) {
        guard let acquired = devices[path]?.acquired else { return }
        for (charPath, fd) in acquired {
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLHUP | POLLERR) != 0 {
                close(fd)
                devices[path]?.acquired[charPath] = nil
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: ObjectPath(stringLiteral: charPath))
                log.record("acquire-released", ["path": charPath])
            }
        }
    }

    func passesFilters(_ device: DeviceState, _ adapter: AdapterState) -> Bool {
        // bluetoothd merges every client's filter: a device passes if any client's would pass it.
        let advertised = Set(device.spec.uuids.compactMap { BluetoothUUID($0) })
        for client in adapter.discoveryClients.values where client.started {
            guard case .array(.string, let items)? = client.filter["UUIDs"]?.unwrapped, !items.isEmpty else {
                return true
            }
            let wanted = Set(
                items.compactMap { if case .string(let s) = $0 { BluetoothUUID(s) } else { nil } })
            if !wanted.isDisjoint(with: advertised) { return true }
        }
        return false
    }

    func isDue(_ event: Scenario.Event, at t: Double) -> Bool {
        if let at = event.at { return at <= t }
        if let count = event.afterNotifications { return notificationsInAll >= count }
        return lastEventAt + (event.after ?? 0) <= t
    }

    func runEvents(until t: Double) {
        let events = scenario.events
        while eventsDone < events.count && isDue(events[eventsDone], at: t) {
            let event = events[eventsDone]
            eventsDone += 1
            lastEventAt = t
            switch event.type {
            case "adapter-power":
                let name = event.adapter ?? adapterOrder.first ?? "hci0"
                let on = event.powered ?? true
                Task { try? await self.power(name, on) }
            case "bluetoothd-restart":
                let downFor = event.downFor ?? 1
                Task { await self.restart(downFor: downFor) }
            case "battery":
                if let address = event.device.flatMap({ BluetoothAddress($0) }), let percent = event.percent {
                    setBattery(address, percent)
                }
            default:
                break
            }
        }
    }

    /// The strap's battery level changes: Battery1's Percentage while connected (bluetoothd
    /// follows 0x2A19 notifications), and what the next connection reads. Scenario `battery`
    /// events call it; tests may too, to change the level exactly when they are ready.
    public func setBattery(address: String, percent: Int) {
        if let parsed = BluetoothAddress(address) { setBattery(parsed, percent) }
    }

    func setBattery(_ address: BluetoothAddress, _ percent: Int) {
        guard let (path, device) = devices.first(where: { $0.value.address == address }) else { return }
        devices[path]?.battery = percent
        log.record("battery", ["path": path.rawValue, "percent": percent])
        if device.connected && device.servicesResolved {
            try? connection?.setProperty(
                "Percentage", to: .byte(UInt8(clamping: percent)), interface: BlueZName.battery, at: path)
            // The strap notifies 0x2A19 too, for clients subscribed to it.
            if let level = device.layout.characteristics.first(where: { $0.role == .batteryLevel }),
                !(device.notifySessions[level.path] ?? []).isEmpty
            {
                try? connection?.setProperty(
                    "Value", to: .bytes([UInt8(clamping: percent)]), interface: BlueZName.gattCharacteristic,
                    at: ObjectPath(stringLiteral: level.path))
            }
        }
    }

    /// A link drop like the scenario's `drops`, starting now, when a test is ready for it.
    public func dropLink(address: String, for seconds: Double) {
        guard let parsed = BluetoothAddress(address),
            let path = devices.first(where: { $0.value.address == parsed })?.key
        else { return }
        devices[path]?.extraDrops.append(Scenario.Drop(at: now, for: seconds))
        advance()
    }

    /// What the scenario's `adapter-power` event does, when a test is ready for it.
    public func setAdapterPower(_ name: String, on: Bool) async {
        try? await power(name, on)
    }

    /// What the scenario's `bluetoothd-restart` event does, when a test is ready for it; returns
    /// once bluetoothd is back.
    public func restartBluetoothd(downFor: Double) async {
        await restart(downFor: downFor)
    }

    /// bluetoothd exits (the name and every object vanish at once, sockets close), then comes back.
    func restart(downFor: Double) async {
        log.record("restart", ["phase": "down"])
        down = true
        for path in devices.keys {
            stopNotifying(path)
            closeAcquired(path, announce: false)
            devices[path]?.connected = false
            devices[path]?.servicesResolved = false
            devices[path]?.gattExported = false
            devices[path]?.exported = false
            devices[path]?.notifySessions = [:]
        }
        for name in adapterOrder { adapters[name]?.discoveryClients = [:] }
        watcher?.cancel()
        if let connection { await connection.close() }
        connection = nil
        try? await Task.sleep(for: .seconds(downFor))
        do {
            try await serve()
            down = false
            log.record("restart", ["phase": "up"])
        } catch {
            log.record("restart", ["phase": "failed", "error": "\(error)"])
        }
    }
}

extension String {
    fileprivate func replacingColons() -> String {
        String(map { $0 == ":" ? "-" : $0 })
    }

    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
