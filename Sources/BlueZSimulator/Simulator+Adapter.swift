import DBus

/// Adapter1: discovery sessions and their filters, power, RemoveDevice.
extension Simulator {
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
            "PowerState": .string(adapter.spec.blocked ? "off-blocked" : adapter.powered ? "on" : "off"),
            "Discoverable": .boolean(false),
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
                items.allSatisfy({ if case .string(let s) = $0 { SimulatedUUID(s) != nil } else { false } })
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
        if device.paired { log.record("unpaired", ["path": path.rawValue]) }
        forgetPairing(path)
        return []
    }

    func setPowered(adapterPath: ObjectPath, _ on: Bool) async throws {
        guard let name = adapterName(adapterPath) else { throw BlueZError.doesNotExist }
        if on, adapters[name]?.spec.blocked == true {
            log.record("power-refused", ["adapter": name, "reason": "rfkill"])
            throw BlueZError.blocked
        }
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

    func passesFilters(_ device: DeviceState, _ adapter: AdapterState) -> Bool {
        // bluetoothd merges every client's filter: a device passes if any client's would pass it.
        let advertised = Set(device.spec.uuids.compactMap { SimulatedUUID($0) })
        for client in adapter.discoveryClients.values where client.started {
            guard case .array(.string, let items)? = client.filter["UUIDs"]?.unwrapped, !items.isEmpty else {
                return true
            }
            let wanted = Set(
                items.compactMap { if case .string(let s) = $0 { SimulatedUUID(s) } else { nil } })
            if !wanted.isDisjoint(with: advertised) { return true }
        }
        return false
    }
}
