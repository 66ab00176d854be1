import DBus
import Synchronization

/// How a `pair` call ended when it did not fail.
public enum PairingOutcome: Sendable, Equatable {
    /// bluetoothd paired the device now.
    case paired
    /// The device was paired already (by hrm or by another program).
    case alreadyPaired
}

extension BlueZClient {
    /// Numbers the pairing agents of this process, so that each has an object path of its own.
    private static let agentNumbers = Atomic<Int>(0)

    /// Every device bluetoothd knows under `adapter` (seen lately, paired or connected), by path.
    public func knownDevices(on adapter: Adapter) -> [DiscoveredDevice] {
        mirror.paths(with: Self.deviceInterface).filter { $0.isDescendant(of: adapter.path.objectPath) }
            .sorted().compactMap { path in
                mirror.properties(path, Self.deviceInterface).flatMap {
                    DiscoveredDevice(path: path, properties: $0)
                }
            }
    }

    /// Whether bluetoothd says `devicePath` is paired (`Paired`; false when it is unknown).
    public func isPaired(_ devicePath: DevicePath) -> Bool {
        mirror.properties(devicePath.objectPath, Self.deviceInterface)?["Paired"] == .boolean(true)
    }

    /// Pairs with `devicePath` as a device without input or output (LE "Just Works": no PIN, no
    /// passkey), then marks it `Trusted` so that bluetoothd lets it reconnect without asking.
    ///
    /// For the call, hrm registers an `org.bluez.Agent1` of its own with `AgentManager1`
    /// (capability NoInputNoOutput): bluetoothd asks the agent of whoever called Pair. It never
    /// asks to be the default agent, so a desktop's own agent keeps answering everything else; and
    /// the agent accepts a confirmation or an authorisation only for the device being paired.
    /// The agent is unregistered when the call ends, however it ends.
    ///
    /// bluetoothd connects the device for Pair if it is not connected; a connection this call made
    /// is not closed here (a caller that wanted only the pairing disconnects).
    ///
    /// - Throws: `.pairingFailed` when the device refused, the pairing timed out (after
    ///   `timeout`; the attempt is cancelled then) or bluetoothd could not pair; `.deviceNotFound`
    ///   when bluetoothd no longer knows the device; the other codes as any call.
    public func pair(_ devicePath: DevicePath, timeout: Duration = .seconds(30)) async throws(BlueZError)
        -> PairingOutcome
    {
        let path = devicePath.objectPath
        guard mirror.properties(path, Self.deviceInterface) != nil else {
            throw BlueZError(.deviceNotFound, "bluetoothd no longer knows \(path)")
        }
        if isPaired(devicePath) {
            try await trust(devicePath)
            return .alreadyPaired
        }
        let agent = try await registerAgent(pairing: devicePath)
        let outcome: Result<PairingOutcome, BlueZError>
        do throws(BlueZError) {
            logger.info("pairing with \(path)")
            _ = try await call("Pair", on: path, interface: BlueZNames.Call.device, timeout: timeout)
            outcome = .success(.paired)
        } catch {
            outcome = await pairingFailure(error, devicePath, timeout: timeout)
        }
        await unregisterAgent(agent)
        let result = try outcome.get()
        try await trust(devicePath)
        return result
    }

    /// What a failed Pair call means: "Already Paired" is success; a timeout is cancelled (else
    /// bluetoothd goes on trying) and said as a pairing that did not answer.
    private func pairingFailure(_ error: BlueZError, _ devicePath: DevicePath, timeout: Duration) async
        -> Result<PairingOutcome, BlueZError>
    {
        if error.reply == .alreadyExists { return .success(.alreadyPaired) }
        if error.code == .cancelled { return .failure(error) }
        if error.code == .timeout {
            // From a task of its own: a cancelled caller's calls are not sent.
            await Task {
                _ = try? await self.call(
                    "CancelPairing", on: devicePath.objectPath, interface: BlueZNames.Call.device,
                    timeout: .seconds(5))
            }.value
            return .failure(
                BlueZError(
                    .pairingFailed,
                    "the device did not complete pairing within \(BlueZError.seconds(timeout)) (is it worn, and "
                        + "not paired with another device that holds it?)",
                    dbusName: error.dbusName))
        }
        guard error.code == .bluez || error.code == .dbus else { return .failure(error) }
        return .failure(
            BlueZError(.pairingFailed, "pairing was refused: \(error.message)", dbusName: error.dbusName))
    }

    /// Sets `Trusted` (bluetoothd then lets the device reconnect and use its services without
    /// asking an agent).
    public func trust(_ devicePath: DevicePath) async throws(BlueZError) {
        let path = devicePath.objectPath
        guard mirror.properties(path, Self.deviceInterface)?["Trusted"] != .boolean(true) else { return }
        try await set("Trusted", to: .boolean(true), on: path, interface: BlueZNames.Call.device)
    }

    /// Removes `devicePath` from `adapter` (`Adapter1.RemoveDevice`): bluetoothd forgets the device
    /// and its pairing keys, and disconnects it if it is connected. The device reappears as new
    /// when it is next seen.
    public func removeDevice(_ devicePath: DevicePath, from adapter: AdapterPath) async throws(BlueZError) {
        _ = try await call(
            "RemoveDevice", on: adapter.objectPath, interface: BlueZNames.Call.adapter,
            body: [.objectPath(devicePath.objectPath)])
    }

    /// Exports an agent for pairing `device` and registers it (NoInputNoOutput).
    private func registerAgent(pairing device: DevicePath) async throws(BlueZError) -> ObjectPath {
        let number = Self.agentNumbers.add(1, ordering: .relaxed).newValue
        let path: ObjectPath
        do throws(DBusError) {
            path = try ObjectPath("/org/hrm/agent\(number)")
            try connection.export(PairingAgent.interface(accepting: device.objectPath), at: path)
        } catch {
            throw BlueZError(.dbus, "cannot export the pairing agent: \(error.message)")
        }
        do throws(BlueZError) {
            _ = try await call(
                "RegisterAgent", on: BlueZNames.root, interface: BlueZNames.Call.agentManager,
                body: [.objectPath(path), .string(PairingAgent.capability)])
        } catch {
            connection.unexport(at: path)
            throw BlueZError(
                error.code == .bluez ? .pairingFailed : error.code,
                "bluetoothd refused hrm's pairing agent: \(error.message)", dbusName: error.dbusName)
        }
        logger.info("pairing agent registered", metadata: ["path": "\(path)"])
        return path
    }

    /// Unregisters and withdraws the agent (from a task of its own, so a cancelled caller's
    /// call still goes out: bluetoothd would keep the agent until hrm leaves the bus).
    private func unregisterAgent(_ path: ObjectPath) async {
        await Task {
            _ = try? await self.call(
                "UnregisterAgent", on: BlueZNames.root, interface: BlueZNames.Call.agentManager,
                body: [.objectPath(path)], timeout: .seconds(5))
        }.value
        connection.unexport(at: path)
    }
}

/// hrm's `org.bluez.Agent1`, as bluetoothd's doc/agent-api.txt describes it, for a device with no
/// input or output: there is no PIN or passkey to give, so those requests are rejected; a
/// confirmation or authorisation is accepted for the device being paired only (anything else
/// asking is not what the user asked hrm to do).
enum PairingAgent {
    static let capability = "NoInputNoOutput"
    static let rejected: ErrorName = "org.bluez.Error.Rejected"

    static func interface(accepting device: ObjectPath) -> Interface {
        @Sendable func onlyFor(_ call: MethodCall) throws -> [Value] {
            guard case .objectPath(let asking)? = call.body.first, asking == device else {
                throw DBusError(name: rejected, message: "hrm pairs only the device it was asked to")
            }
            return []
        }
        @Sendable func refuse(_ call: MethodCall) throws -> [Value] {
            throw DBusError(name: rejected, message: "hrm has no input or output for a PIN or passkey")
        }
        return Interface(
            BlueZNames.Call.agent,
            methods: [
                Method("Release") { _ in [] },
                Method("RequestPinCode", input: "o", output: "s", handler: refuse),
                Method("DisplayPinCode", input: "os", handler: refuse),
                Method("RequestPasskey", input: "o", output: "u", handler: refuse),
                Method("DisplayPasskey", input: "ouq") { _ in [] },
                Method("RequestConfirmation", input: "ou", handler: onlyFor),
                Method("RequestAuthorization", input: "o", handler: onlyFor),
                Method("AuthorizeService", input: "os", handler: onlyFor),
                Method("Cancel") { _ in [] },
            ])
    }
}
