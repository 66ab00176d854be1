import DBus

/// Device1 and the link's lifecycle: appearing, Connect, Disconnect, drops, reverse devices.
extension Simulator {
    nonisolated func deviceInterface() -> Interface {
        Interface(
            BlueZName.device,
            methods: [
                method("Connect") { call in try await self.connect(call) },
                method("Disconnect") { call in try await self.disconnectCall(call) },
                method("ConnectProfile", input: "s") { _ in throw BlueZError.notSupported },
                method("DisconnectProfile", input: "s") { _ in throw BlueZError.notSupported },
                method("Pair") { call in try await self.pair(call) },
                method("CancelPairing") { call in try await self.cancelPairing(call) },
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
                Property("Trusted", type: .boolean, access: .readWrite) { value, call in
                    guard case .boolean(let trusted) = value else { throw BlueZError.invalidArguments }
                    await self.setTrusted(call.path, trusted)  // the connection announces Trusted
                    return value
                },
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
            "Alias": .string(spec.name ?? device.address.dashed),
            "Paired": .boolean(device.paired), "Bonded": .boolean(device.bonded),
            "Trusted": .boolean(device.trusted),
            "Blocked": .boolean(false), "LegacyPairing": .boolean(false),
            "Connected": .boolean(device.connected),
            "UUIDs": .strings(spec.uuids.compactMap { SimulatedUUID($0)?.description }),
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
            guard let at = drop.at, time >= at else { return false }
            // A drop with `every` comes back every that many seconds after its start.
            let since = drop.every.map { (time - at).truncatingRemainder(dividingBy: $0) } ?? (time - at)
            return since < drop.for
        }
    }

    /// Device1.Connect(). While it waits (a discovery running, the strap away, `connectDelay`)
    /// it is pending: a second Connect() of the same device fails, a Disconnect() ends it, and
    /// under `concurrentConnects: refuse` another device's Connect() on the adapter fails.
    func connect(_ call: MethodCall) async throws -> [Value] {
        let path = call.path
        guard let device = devices[path], device.exported else { throw BlueZError.doesNotExist }
        guard let adapter = adapters[device.adapter], adapter.powered else { throw BlueZError.notReady }
        if device.connected || device.stalled { return [] }
        if device.pendingConnect != nil {
            log.record("connect-refused", ["path": path.rawValue, "reason": "pending"])
            throw BlueZError.connectAlreadyPending
        }
        if Scenario.ConcurrentConnects(rawValue: adapter.spec.concurrentConnects) == .refuse,
            let other = devices.first(where: {
                $0.key != path && $0.value.adapter == device.adapter && $0.value.pendingConnect != nil
            })
        {
            log.record(
                "connect-refused",
                ["path": path.rawValue, "reason": "concurrent", "pending": other.key.rawValue])
            throw BlueZError.inProgress
        }
        nextConnect += 1
        let token = nextConnect
        devices[path]?.pendingConnect = token
        defer {
            if devices[path]?.pendingConnect == token { devices[path]?.pendingConnect = nil }
        }
        let connectTime = device.spec.connectDelay ?? timing.connectReply
        if let failure = device.failuresLeft.first {
            devices[path]?.failuresLeft.removeFirst()
            if failure.stall {
                devices[path]?.stalled = true
                log.record("connect-stalled", ["path": path.rawValue])
                return []
            }
            try await pendingWait(connectTime, path, token)
            // The name comes from the scenario (validation checks it); never trap on it.
            guard let name = try? ErrorName(failure.error) else {
                throw BlueZError.failed("\(failure.message) (the scenario's error name is not valid)")
            }
            throw DBusError(name: name, message: failure.message)
        }
        // The kernel connects through passive scanning: while a discovery runs, Connect completes
        // only when it stops or the LE scan window ends.
        let started = now
        while adapters[device.adapter]?.discovering == true && now - started < timing.connectWhileDiscovering
        {
            try await pendingWait(timing.tick, path, token)
        }
        while !reachable(device, at: now) {
            guard now - started < timing.connectTimeout else {
                throw BlueZError.failed("le-connection-abort-by-local")
            }
            try await pendingWait(timing.tick, path, token)
        }
        try await pendingWait(connectTime, path, token)
        while devices[path]?.connectHeld == true { try await pendingWait(timing.tick, path, token) }
        guard devices[path]?.connected == false else { return [] }
        if let cap = adapter.spec.maxConnections {
            let links = devices.values.filter { $0.adapter == device.adapter && $0.connected }.count
            if links >= cap {
                // The controller has no room for another LE link. It refuses (HCI 0x09 Connection
                // Limit Exceeded or 0x0D Limited Resources), the kernel fails the ATT socket's
                // connect (bt_to_errno: EMLINK or ECONNREFUSED), and bluetoothd 5.66's
                // att_connect_cb (src/device.c) turns every such error into -ECONNABORTED:
                // btd_error_le_conn_from_errno (src/error.c) makes that "le-connection-abort-by-local".
                log.record("connect-refused", ["path": path.rawValue, "reason": "link-cap", "links": links])
                throw BlueZError.failed("le-connection-abort-by-local")
            }
        }
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

    /// Waits `seconds` (in ticks) while the Connect `token` is pending. Throws what bluetoothd
    /// answers a pending Connect that a Disconnect() cancelled (device_request_disconnect in
    /// 5.66's src/device.c: Failed, `br-connection-canceled`, for LE too), or that a restart ended.
    func pendingWait(_ seconds: Double, _ path: ObjectPath, _ token: Int) async throws {
        let end = now + seconds
        repeat {
            try await Task.sleep(for: .seconds(max(0, min(timing.tick, end - now))))
            guard devices[path]?.pendingConnect == token else { throw BlueZError.connectCanceled }
        } while now < end
    }

    func connected(_ path: ObjectPath) async {
        guard devices[path]?.connected == true else { return }
        exportReverseDevice(path)
        try? await Task.sleep(for: .seconds(timing.servicesResolved))
        guard let device = devices[path], device.connected else { return }
        let objectsFirst = scenario.servicesResolved == .afterObjects
        if objectsFirst { exportGATT(path) }
        let uuids = (device.layout.serviceUUIDs + device.spec.uuids.compactMap { SimulatedUUID($0) })
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
                at: charPath)
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
        if devices[path]?.pendingConnect != nil {
            devices[path]?.pendingConnect = nil
            log.record("connect-cancelled", ["path": path.rawValue])
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
        await pause(timing.disconnect)
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
        // The strap stops its PMD streams when the link goes; a pairing under way fails
        // (MGMT_STATUS_DISCONNECTED), and writes left unanswered end.
        stopPMD(path, reason: "link")
        endPairing(path, .failed(BlueZError.authenticationCanceled))
        endUnansweredWrites(device: path)
        for characteristic in device.layout.characteristics
        where characteristic.role == .measurement
            || characteristic.role == .batteryLevel || characteristic.role == .pmdControlPoint
            || characteristic.role == .pmdData
        {
            let charPath = characteristic.path
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
                SimulatedAddress($0.spec.address) == device.address
            }),
            let central = adapters[device.adapter],
            let centralAddress = SimulatedAddress(central.spec.address)
        else { return nil }
        return try? peripheral.path.appending(centralAddress.pathComponent)
    }

    func exportReverseDevice(_ path: ObjectPath) {
        guard let reverse = reverseDevicePath(path), let central = adapters[devices[path]?.adapter ?? ""],
            let address = SimulatedAddress(central.spec.address),
            let peripheralPath = reverse.parent
        else { return }
        try? connection?.export(
            deviceInterface(), at: reverse,
            properties: [
                "Address": .string(address.description), "AddressType": .string("public"),
                "Alias": .string(address.dashed),
                "Paired": .boolean(false), "Bonded": .boolean(false), "Trusted": .boolean(false),
                "Blocked": .boolean(false), "LegacyPairing": .boolean(false), "Connected": .boolean(true),
                "UUIDs": .strings([]), "Adapter": .objectPath(peripheralPath),
                "ServicesResolved": .boolean(false),
            ])
    }
}
