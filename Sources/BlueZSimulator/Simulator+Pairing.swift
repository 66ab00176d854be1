import DBus

/// Pairing: AgentManager1's agents, Device1.Pair() and CancelPairing(), Trusted, as bluetoothd
/// 5.66 does them (src/agent.c, src/device.c) over a kernel that asks user space to confirm Just
/// Works (Linux 5.8 and later: mgmt_user_confirm_request with confirm_hint 1).
///
/// - Every registered agent joins bluetoothd's queue of default agents (the first at its head;
///   RequestDefaultAgent moves one there), so a Pair() finds an agent when anyone registered one.
/// - Pair() with Just Works and an agent: the agent is not called (device_confirm_passkey accepts
///   on its own while a bonding is under way); without any agent, new_auth finds none, the
///   confirmation is refused and Pair() fails with AuthenticationFailed.
extension Simulator {
    /// The IO capabilities RegisterAgent accepts (parse_io_capability; "" is KeyboardDisplay).
    static let agentCapabilities: Set<String> = [
        "", "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay",
    ]

    nonisolated func agentManagerInterface() -> Interface {
        Interface(
            BlueZName.agentManager,
            methods: [
                method("RegisterAgent", input: "os") { call in try await self.registerAgent(call) },
                method("UnregisterAgent", input: "o") { call in try await self.unregisterAgent(call) },
                method("RequestDefaultAgent", input: "o") { call in try await self.requestDefaultAgent(call)
                },
            ])
    }

    func registerAgent(_ call: MethodCall) throws -> [Value] {
        let sender = call.sender?.rawValue ?? ""
        guard agents[sender] == nil else { throw BlueZError.alreadyExists }
        let (path, capability) = try call.decode(ObjectPath.self, String.self)
        guard Self.agentCapabilities.contains(capability) else { throw BlueZError.invalidArguments }
        agents[sender] = Agent(path: path, capability: capability.isEmpty ? "KeyboardDisplay" : capability)
        defaultAgents.append(sender)
        log.record(
            "agent-registered", ["sender": sender, "path": path.rawValue, "capability": capability])
        return []
    }

    func unregisterAgent(_ call: MethodCall) throws -> [Value] {
        let sender = call.sender?.rawValue ?? ""
        guard let agent = agents[sender] else { throw BlueZError.doesNotExist }
        let (path) = try call.decode(ObjectPath.self)
        guard path == agent.path else { throw BlueZError.doesNotExist }
        removeAgent(sender, reason: "unregistered")
        return []
    }

    func requestDefaultAgent(_ call: MethodCall) throws -> [Value] {
        let sender = call.sender?.rawValue ?? ""
        guard let agent = agents[sender] else { throw BlueZError.doesNotExist }
        let (path) = try call.decode(ObjectPath.self)
        guard path == agent.path else { throw BlueZError.doesNotExist }
        defaultAgents.removeAll { $0 == sender }
        defaultAgents.insert(sender, at: 0)
        log.record("agent-default", ["sender": sender, "path": path.rawValue])
        return []
    }

    func removeAgent(_ owner: String, reason: String) {
        guard let agent = agents.removeValue(forKey: owner) else { return }
        defaultAgents.removeAll { $0 == owner }
        log.record("agent-unregistered", ["sender": owner, "path": agent.path.rawValue, "reason": reason])
    }

    /// A client left the bus: its agent goes (agent_disconnect: no Release is sent).
    func agentOwnerLeft(_ owner: String) {
        removeAgent(owner, reason: "client-left")
    }

    // MARK: - Pair, CancelPairing

    /// Device1.Pair(). Connects first when the link is down (5.66 connects LE before pairing),
    /// then plays the scenario's `pairing`. Paired (and Bonded) go out before the reply.
    func pair(_ call: MethodCall) async throws -> [Value] {
        let path = call.path
        guard let device = devices[path], device.exported else { throw BlueZError.doesNotExist }
        guard device.pairing == nil else { throw BlueZError.inProgress }
        if device.bonded { throw BlueZError.alreadyExists }
        let sender = call.sender?.rawValue ?? ""
        // The agent bluetoothd would ask: the caller's, or the default one (agent_get).
        let agent = agents[sender] != nil ? sender : defaultAgents.first
        log.record("pairing", ["path": path.rawValue, "sender": sender, "agent": agent ?? ""])
        if !device.connected {
            try await bringUpForPairing(path)
        }
        // The kernel answers a second pairing of a device paired but not bonded itself.
        if devices[path]?.paired == true { throw BlueZError.alreadyPaired }
        nextPairing += 1
        let number = nextPairing
        let mode = Scenario.Pairing(rawValue: device.spec.pairing) ?? .justWorks
        let outcome = await withCheckedContinuation { (end: CheckedContinuation<PairingOutcome, Never>) in
            devices[path]?.pairing = (number, sender, end)
            let (delay, result): (Double, PairingOutcome) =
                switch mode {
                case .justWorks:
                    agent == nil
                        ? (timing.pairing, .failed(BlueZError.authenticationFailed))
                        : (timing.pairing, .paired)
                case .refuse: (timing.pairing, .failed(BlueZError.authenticationFailed))
                case .reject: (timing.pairing, .failed(BlueZError.authenticationRejected))
                case .timeout: (timing.pairingTimeout, .failed(BlueZError.authenticationTimeout))
                }
            Task {
                try? await Task.sleep(for: .seconds(delay))
                self.endPairing(path, result, number: number)
            }
        }
        switch outcome {
        case .paired:
            guard devices[path]?.exported == true else { throw BlueZError.doesNotExist }
            let bonded = devices[path]?.spec.bonds ?? true
            devices[path]?.paired = true
            devices[path]?.bonded = bonded
            try? connection?.setProperties(
                ["Paired": .boolean(true), "Bonded": .boolean(bonded)], interface: BlueZName.device, at: path)
            log.record("paired", ["path": path.rawValue, "bonded": bonded])
            return []
        case .failed(let error):
            log.record(
                "pairing-failed",
                ["path": path.rawValue, "error": error.name.rawValue, "message": error.message])
            throw error
        }
    }

    /// Ends the Pair() under way on `path` (the one numbered `number`, when given) with `outcome`.
    func endPairing(_ path: ObjectPath, _ outcome: PairingOutcome, number: Int? = nil) {
        guard let pairing = devices[path]?.pairing, number == nil || pairing.number == number else { return }
        devices[path]?.pairing = nil
        pairing.end.resume(returning: outcome)
    }

    /// Device1.CancelPairing(): the Pair() under way fails with AuthenticationCanceled and this
    /// call succeeds; with none under way, DoesNotExist.
    func cancelPairing(_ call: MethodCall) throws -> [Value] {
        guard devices[call.path]?.exported == true else { throw BlueZError.doesNotExist }
        guard devices[call.path]?.pairing != nil else { throw BlueZError.doesNotExist }
        log.record("pairing-cancelled", ["path": call.path.rawValue])
        endPairing(call.path, .failed(BlueZError.authenticationCanceled))
        return []
    }

    /// The LE link a Pair() of an unconnected device brings up first: as Connect() does, waiting
    /// for the strap to be reachable (a connect timeout fails the pairing as Connect fails).
    func bringUpForPairing(_ path: ObjectPath) async throws {
        guard let device = devices[path], let adapter = adapters[device.adapter], adapter.powered else {
            throw BlueZError.notReady
        }
        let started = now
        while !reachable(device, at: now) {
            guard now - started < timing.connectTimeout else {
                throw BlueZError.failed("le-connection-abort-by-local")
            }
            try await Task.sleep(for: .seconds(timing.tick))
        }
        try await Task.sleep(for: .seconds(device.spec.connectDelay ?? timing.connectReply))
        guard devices[path]?.connected == false else { return }
        devices[path]?.connected = true
        log.record("state", ["path": path.rawValue, "connected": true, "reason": "pair"])
        try? connection?.setProperties(["Connected": .boolean(true)], interface: BlueZName.device, at: path)
        Task { await self.connected(path) }
    }

    /// Trusted set by a client: kept (RemoveDevice forgets it) and logged.
    func setTrusted(_ path: ObjectPath, _ trusted: Bool) {
        devices[path]?.trusted = trusted
        log.record("trusted", ["path": path.rawValue, "trusted": trusted])
    }

    /// RemoveDevice: bluetoothd removes the keys with the device.
    func forgetPairing(_ path: ObjectPath) {
        endPairing(path, .failed(BlueZError.authenticationCanceled))
        devices[path]?.paired = false
        devices[path]?.bonded = false
        devices[path]?.trusted = false
    }
}
