import DBus
internal import Threads

/// A GATT service of a connected device (`org.bluez.GattService1`).
public struct Service: Sendable, Equatable {
    /// The service's UUID (0x180D for Heart Rate).
    public let uuid: BluetoothUUID
    /// `Primary`: a primary service, not one only included by another.
    public let primary: Bool
    /// `/org/bluez/hci0/dev_.../service0010`.
    public let path: AttributePath
}

/// A GATT descriptor (`org.bluez.GattDescriptor1`), such as 0x2902, the CCC.
public struct Descriptor: Sendable, Equatable {
    /// The descriptor's UUID.
    public let uuid: BluetoothUUID
    /// `.../service0010/char0011/desc0013`.
    public let path: AttributePath
    /// The characteristic the descriptor belongs to.
    public let characteristicPath: AttributePath
}

/// A GATT characteristic of a connected device (`org.bluez.GattCharacteristic1`).
public struct Characteristic: Sendable, Equatable {
    /// The characteristic's UUID (0x2A37 for Heart Rate Measurement).
    public let uuid: BluetoothUUID
    /// The UUID of the service it belongs to; nil when bluetoothd has not listed that service (yet).
    public let serviceUUID: BluetoothUUID?
    /// `read`, `write`, `notify`, ...
    public let flags: [String]
    /// `.../service0010/char0011`.
    public let path: AttributePath
    /// The device the characteristic belongs to.
    public let devicePath: DevicePath
}

extension BlueZClient {
    /// The device at `address` under `adapter`, as bluetoothd knows it now.
    public func device(_ address: BluetoothAddress, on adapter: Adapter) -> DiscoveredDevice? {
        guard let path = try? adapter.path.objectPath.appending(address.pathComponent) else { return nil }
        return mirror.properties(path, Self.deviceInterface).flatMap {
            DiscoveredDevice(path: path, properties: $0)
        }
    }

    /// The services bluetoothd has exported for `devicePath`, by path (that is, by handle).
    public func services(of devicePath: DevicePath) -> [Service] {
        let device = devicePath.objectPath
        return mirror.paths(with: Self.serviceInterface).compactMap { path -> Service? in
            guard path.isDescendant(of: device),
                let properties = mirror.properties(path, Self.serviceInterface),
                case .string(let text)? = properties["UUID"], let uuid = BluetoothUUID(text)
            else { return nil }
            return Service(
                uuid: uuid, primary: properties["Primary"] != .boolean(false), path: AttributePath(path))
        }
    }

    /// The descriptors of `characteristic`, by path.
    public func descriptors(of characteristic: Characteristic) -> [Descriptor] {
        let parent = characteristic.path.objectPath
        return mirror.paths(with: Self.descriptorInterface).compactMap { path -> Descriptor? in
            guard path.isDescendant(of: parent),
                case .string(let text)? = mirror.properties(path, Self.descriptorInterface)?["UUID"],
                let uuid = BluetoothUUID(text)
            else { return nil }
            return Descriptor(uuid: uuid, path: AttributePath(path), characteristicPath: characteristic.path)
        }
    }

    /// The characteristic with `uuid` (16- or 128-bit, compared as 128-bit), in the service with
    /// `service` when given; the first by handle when several match.
    public func characteristic(
        _ uuid: BluetoothUUID, service: BluetoothUUID? = nil, of devicePath: DevicePath
    ) -> Characteristic? {
        characteristics(of: devicePath).first {
            $0.uuid == uuid && (service == nil || $0.serviceUUID == service)
        }
    }

    /// The characteristics bluetoothd has exported for `devicePath`, by path.
    public func characteristics(of devicePath: DevicePath) -> [Characteristic] {
        let device = devicePath.objectPath
        return mirror.paths(with: Self.characteristicInterface).compactMap { path -> Characteristic? in
            guard path.isDescendant(of: device),
                let properties = mirror.properties(path, Self.characteristicInterface),
                case .string(let uuidText)? = properties["UUID"], let uuid = BluetoothUUID(uuidText)
            else { return nil }
            var flags: [String] = []
            if case .array(.string, let items)? = properties["Flags"] {
                flags = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            }
            var serviceUUID: BluetoothUUID? = nil
            if case .objectPath(let service)? = properties["Service"],
                case .string(let text)? = mirror.properties(service, Self.serviceInterface)?["UUID"]
            {
                serviceUUID = BluetoothUUID(text)
            }
            return Characteristic(
                uuid: uuid, serviceUUID: serviceUUID, flags: flags, path: AttributePath(path),
                devicePath: devicePath)
        }
    }

    enum WaitOutcome<T: Sendable>: Sendable {
        case done(T)
        case failed(BlueZError)
        case pending
    }

    /// Re-checks `check` against the mirror after every object event until it is done or fails,
    /// or `timeout` passes.
    func wait<T: Sendable>(
        _ what: String, timeout: Duration, _ check: @escaping @Sendable (ObjectMirror) -> WaitOutcome<T>
    ) async throws(BlueZError) -> T {
        // Only woken: the check reads the mirror.
        let (events, id) = watch(keeping: 1)
        defer { unwatch(id) }
        switch check(mirror) {
        case .done(let value): return value
        case .failed(let error): throw error
        case .pending: break
        }
        let result: Result<T, BlueZError> = await withTaskGroup(of: Result<T, BlueZError>?.self) { group in
            group.addTask { [weak self] in
                for await _ in events {
                    guard let mirror = await self?.mirror else { break }
                    switch check(mirror) {
                    case .done(let value): return .success(value)
                    case .failed(let error): return .failure(error)
                    case .pending: continue
                    }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .failure(BlueZError(.timeout, "timed out after \(timeout) waiting for \(what)"))
            }
            var outcome: Result<T, BlueZError> = .failure(
                BlueZError(.disconnected, "the bus connection ended"))
            if let first = await group.next(), let value = first { outcome = value }
            group.cancelAll()
            return outcome
        }
        return try result.get()
    }

    /// Connects (unless connected already) and waits until the services are resolved and the
    /// characteristics in `require` exist. Retries the routine failures (InProgress,
    /// le-connection-abort-by-local) once Connected has gone false. Returns true when this call
    /// made the connection (so it is ours to disconnect).
    ///
    /// When a connection this call started fails, times out or is cancelled, it sends Disconnect
    /// before it throws, as bleak does: bluetoothd keeps trying a pending LE connection otherwise,
    /// and one that lost track of a link (`device_add_connection() ... is already connected` in
    /// its log) answers every later Connect at once without ever setting Connected.
    ///
    /// A Connect refused because another program's is pending waits for that connection instead
    /// (and returns false: it is not ours). Disconnect then would cancel the other program's
    /// Connect, and two programs doing so to each other never connect at all.
    ///
    /// `settle: false` skips waiting for optional characteristics once the required ones are
    /// there: a reconnect, whose caller read what it wanted the first time.
    public func connect(
        _ devicePath: DevicePath, require: [BluetoothUUID] = [], attempts: Int = 3,
        timeout: Duration = .seconds(20), settle: Bool = true
    ) async throws(BlueZError) -> Bool {
        let path = devicePath.objectPath
        if case .boolean(true)? = mirror.properties(path, Self.deviceInterface)?["Connected"] {
            logger.debug("\(path) is connected already: waiting for its services")
            try await awaitServices(path, require: require, timeout: timeout, settle: settle)
            return false
        }
        do {
            let ours = try await requestConnection(path, attempts: attempts, timeout: timeout)
            try await awaitServices(path, require: require, timeout: timeout, settle: settle)
            return ours
        } catch {
            // Another program's pending Connect is not ours to cancel.
            if error.isAnotherConnectPending { throw error }
            logger.debug("connecting \(path) failed (\(error.message)): sending Disconnect")
            // Sent from a task of its own: a cancelled caller's calls are not sent.
            await Task { try? await self.disconnect(devicePath, timeout: .seconds(5)) }.value
            throw error
        }
    }

    /// Device1.Connect, retrying the routine failures. Returns false when another program's
    /// pending Connect made the connection instead (so it is not ours to disconnect).
    private func requestConnection(_ path: ObjectPath, attempts: Int, timeout: Duration)
        async throws(BlueZError) -> Bool
    {
        var attempt = 0
        while true {
            attempt += 1
            do throws(BlueZError) {
                logger.debug("Connect \(path): attempt \(attempt) of \(attempts)")
                _ = try await call("Connect", on: path, interface: BlueZNames.Call.device, timeout: timeout)
                return true
            } catch {
                if error.isAnotherConnectPending {
                    logger.info(
                        "Connect \(path): another program is connecting it: waiting for that connection")
                    // 5.66's answer means that program's connect is under way: give it the whole
                    // timeout. InProgress (5.82's answer, but also a service discovery or a
                    // Disconnect under way) may be over soon: a short wait, then try again.
                    let patience = error.reply == .inProgress ? min(timeout, .seconds(3)) : timeout
                    if (try? await awaitConnected(path, timeout: patience)) != nil { return false }
                    // That program's Connect failed or was given up: try ours again.
                    guard attempt < attempts else { throw error }
                    continue
                }
                guard error.isRoutineConnectFailure, attempt < attempts else { throw error }
                logger.info("Connect \(path) failed routinely (\(error.message)): trying again")
                // Retry once Connected has gone false (it usually is already).
                _ = try? await wait("Connected to go false", timeout: .seconds(3)) {
                    (mirror) -> WaitOutcome<Bool> in
                    if case .boolean(true)? = mirror.properties(path, Self.deviceInterface)?["Connected"] {
                        return .pending
                    }
                    return .done(true)
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Waits for the device's Connected to be true; fails when the device goes away.
    private func awaitConnected(_ path: ObjectPath, timeout: Duration) async throws(BlueZError) {
        _ = try await wait("the connection", timeout: timeout) { (mirror) -> WaitOutcome<Bool> in
            guard let device = mirror.properties(path, Self.deviceInterface) else {
                return .failed(BlueZError(.deviceNotFound, "the device went away while connecting"))
            }
            if case .boolean(true)? = device["Connected"] { return .done(true) }
            return .pending
        }
    }

    /// Waits for Connected, then ServicesResolved and the characteristics in `require`, then lets
    /// the GATT objects settle.
    private func awaitServices(_ path: ObjectPath, require: [BluetoothUUID], timeout: Duration, settle: Bool)
        async throws(BlueZError)
    {
        // Connected=true usually follows Connect's reply; then ServicesResolved, raced against
        // Connected=false and removal; then the GATT objects, which often arrive after
        // ServicesResolved.
        try await awaitConnected(path, timeout: timeout)
        let required = Set(require)
        let characteristicInterface = Self.characteristicInterface
        let start = ContinuousClock.now
        logger.debug("\(path) is connected: waiting for ServicesResolved")
        _ = try await wait("services to resolve", timeout: timeout) { (mirror) -> WaitOutcome<Bool> in
            guard let device = mirror.properties(path, Self.deviceInterface) else {
                return .failed(BlueZError(.deviceNotFound, "the device went away while connecting"))
            }
            if case .boolean(false)? = device["Connected"] {
                return .failed(BlueZError(.disconnected, "the device disconnected while resolving services"))
            }
            guard case .boolean(true)? = device["ServicesResolved"] else { return .pending }
            let present = Set(
                mirror.paths(with: characteristicInterface).filter { $0.isDescendant(of: path) }.compactMap {
                    if case .string(let text)? = mirror.properties($0, characteristicInterface)?["UUID"] {
                        BluetoothUUID(text)
                    } else {
                        nil
                    }
                })
            return required.isSubset(of: present) ? .done(true) : .pending
        }
        logger.debug(
            "services resolved on \(path)",
            metadata: [
                "services": "\(services(of: DevicePath(path)).count)",
                "characteristics": "\(characteristics(of: DevicePath(path)).count)",
                "ms": "\((ContinuousClock.now - start).wholeMilliseconds)",
            ])
        if settle { await settleServices(of: DevicePath(path)) }
    }

    /// bluetoothd exports the GATT objects one signal at a time, in a burst, often after
    /// ServicesResolved: waits until no new characteristic came for 60 ms (1.5 s at most), so
    /// that the optional ones (battery, device information) are there too.
    public func settleServices(of devicePath: DevicePath) async {
        let path = devicePath.objectPath
        var known = characteristics(of: DevicePath(path)).count
        for _ in 0..<25 {
            try? await Task.sleep(for: .milliseconds(60))
            let now = characteristics(of: DevicePath(path)).count
            if now == known { break }
            known = now
        }
    }

    /// Disconnects and waits for Connected=false, which bluetoothd sends after the reply.
    public func disconnect(_ devicePath: DevicePath, timeout: Duration = .seconds(10))
        async throws(BlueZError)
    {
        let path = devicePath.objectPath
        logger.debug("disconnecting \(path)")
        _ = try await call("Disconnect", on: path, interface: BlueZNames.Call.device, timeout: timeout)
        _ = try await wait("Connected to go false", timeout: .seconds(5)) { (mirror) -> WaitOutcome<Bool> in
            if case .boolean(true)? = mirror.properties(path, Self.deviceInterface)?["Connected"] {
                return .pending
            }
            return .done(true)
        }
    }

    /// Asks bluetoothd to disconnect without waiting for its reply, which comes only once the
    /// link is down (2-2.7 s on 5.66). The call is on the wire when this returns: bluetoothd
    /// still takes the link down if this process leaves the bus at once (checked on real 5.66 in
    /// the lab), so a run that is ending need not wait.
    public func requestDisconnect(_ devicePath: DevicePath) async throws(BlueZError) {
        logger.debug("disconnecting \(devicePath.objectPath) without waiting for the reply")
        do throws(DBusError) {
            try connection.callNoReply(
                destination: Self.service, path: devicePath.objectPath, interface: BlueZNames.Call.device,
                member: "Disconnect")
        } catch {
            throw BlueZError(error, call: "Disconnect")
        }
        await connection.flush()
    }

    /// ReadValue. bluetoothd also announces the value read as a PropertiesChanged on Value; a
    /// StartNotify stream on the characteristic is told, so that it does not pass it on as a
    /// notification.
    public func read(_ characteristic: Characteristic, timeout: Duration? = nil) async throws(BlueZError)
        -> [UInt8]
    {
        let session = sessions[characteristic.path]
        session?.beginRead()
        var value: [UInt8]? = nil
        defer { session?.endRead(value) }
        let reply = try await call(
            "ReadValue", on: characteristic.path.objectPath, interface: BlueZNames.Call.characteristic,
            body: [.propertyMap([:])], timeout: timeout)
        do throws(DBusError) {
            value = try reply.decode([UInt8].self)
            return value ?? []
        } catch {
            throw BlueZError(error, call: "ReadValue")
        }
    }

    /// Writes `value` with WriteValue: a Write Request that waits for the device's response, or with
    /// `withResponse: false` a Write Command that bluetoothd answers at once.
    ///
    /// `timeout` (else the client's) bounds the wait for the answer: a write to an encrypted
    /// characteristic over an unpaired link may get no answer at all (BLUEZ-NOTES).
    ///
    /// - Throws: `BlueZError` as the call failed (`.bluez` with bluetoothd's reply, `.timeout`, ...).
    public func write(
        _ characteristic: Characteristic, _ value: [UInt8], withResponse: Bool = true,
        timeout: Duration? = nil
    ) async throws(BlueZError) {
        _ = try await call(
            "WriteValue", on: characteristic.path.objectPath, interface: BlueZNames.Call.characteristic,
            body: [.bytes(value), .propertyMap(["type": .string(withResponse ? "request" : "command")])],
            timeout: timeout)
    }
}
