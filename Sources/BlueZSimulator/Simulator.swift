import DBus

/// A simulated bluetoothd: serves `org.bluez` on a bus as BlueZ 5.66 does, playing a scenario.
///
/// One actor owns all state; D-Bus method handlers and the timeline (appearances, drops,
/// notifications, power and restart events) go through it. What it sends follows the order real
/// bluetoothd uses (see shared/design/BLUEZ-NOTES.md): changes caused by a call go out before the
/// call's reply, device-found signals only after StartDiscovery's reply, Connected before Connect's
/// reply, ServicesResolved after (or, as the scenario says, before) the GATT objects' InterfacesAdded.
///
/// This file holds the state, serving (the bus connection, method routing, clients leaving) and
/// bluetoothd's restart; each `Simulator+*.swift` file holds one job: Adapter1, Device1 and the
/// link, GATT objects and calls, the notification pump, the timeline, and the test controls.
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
        /// How long an LE Just Works pairing takes, and a pairing that ends otherwise.
        public var pairing = 0.05
        /// How long a pairing the strap never answers takes to fail (the kernel's SMP timeout).
        public var pairingTimeout = 30.0
        /// How long a PMD write on an unpaired link stays unanswered at most: far past any
        /// caller's timeout (D-Bus's default is 25 s), so that nothing is held for ever.
        public var unansweredWrite = 120.0

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
        /// Its `appearAt` moves to the moment of a `device-appear` event.
        var spec: Scenario.Device
        let address: SimulatedAddress
        let path: ObjectPath
        let adapter: String
        let layout: GATTLayout
        var generator: HeartRateGenerator
        var exported = false
        var connected = false
        var servicesResolved = false
        var gattExported = false
        var failuresLeft: [Scenario.DBusFailure]
        /// The scenario's `callFailures` not used yet, by member.
        var callFailuresLeft: [String: [Scenario.DBusFailure]]
        /// A `stall` happened: Connect answers without connecting until a Disconnect.
        var stalled = false
        /// The pending Connect() (its number), if one is waiting for the link.
        var pendingConnect: Int? = nil
        /// A test holds its Connect() pending until it lets go (`holdConnects`).
        var connectHeld = false
        var lastSeen = 0.0
        var nextReport = 0.0
        /// Notifications sent to a client (by socket or signal), for drops tied to the stream.
        var notificationsSent = 0
        /// Drops asked for while running (`dropLink`), beside the scenario's.
        var extraDrops: [Scenario.Drop] = []
        var contactChangesDone = 0
        /// StartNotify sessions on 0x2A37 (and 0x2A19), by characteristic path: client names.
        var notifySessions: [ObjectPath: Set<String>] = [:]
        /// AcquireNotify: characteristic path → our end of the socket pair.
        var acquired: [ObjectPath: Int32] = [:]
        var notifyTask: Task<Void, Never>? = nil
        var battery: Int?
        /// Paired and bonded (kept across disconnects and bluetoothd's restarts; RemoveDevice
        /// forgets them), and Trusted as a client set it.
        var paired = false
        var bonded = false
        var trusted = false
        /// The Pair() under way: its number, who called, and what ends its wait.
        var pairing: (number: Int, sender: String, end: CheckedContinuation<PairingOutcome, Never>)? = nil
        /// The PMD measurements streaming, by measurement type.
        var pmdStreams: [UInt8: PMDStream] = [:]
        /// Commands written to the PMD control point and not run yet, numbered, in the order written.
        var pmdCommands: [(number: Int, bytes: [UInt8])] = []
    }

    /// How a Pair() under way ends.
    enum PairingOutcome: Sendable {
        case paired
        case failed(DBusError)
    }

    /// A client's registered agent (AgentManager1): its object and IO capability.
    struct Agent {
        let path: ObjectPath
        let capability: String
    }

    let scenario: Scenario
    let busAddress: String
    let log: SimulatorLog
    /// The clients calling, for `settle`.
    nonisolated let clients = ClientTracker()
    /// `settle` has begun: `pause` waits no more.
    var hurrying = false
    /// Pauses that `settle` ends, by id.
    var hurryWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    var nextHurryWaiter = 0
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
    /// GATT calls left unanswered (`stall`), by number: who called, and what ends the wait.
    var stalls: [Int: (sender: String, end: CheckedContinuation<Void, Never>)] = [:]
    var nextStall = 0
    /// Numbers pending Connect() calls, so that a cancelled one knows it was.
    var nextConnect = 0
    /// GATT applications clients registered (Simulator+Peripheral.swift), by owner and path.
    var applications: [PeripheralKey: RegisteredApplication] = [:]
    /// Advertisements clients registered: the adapter each is on, by owner and path.
    var advertisements: [PeripheralKey: String] = [:]
    /// The scenario's consumers at work, by index.
    var consumerTasks: [Int: Task<Void, Never>] = [:]
    /// Consumers subscribed, by the application's characteristic (owner and path).
    var subscribers: [PeripheralKey: Set<Int>] = [:]
    /// The characteristics taken by AcquireNotify (the application offers it): each one's reader.
    var acquiredNotify: [PeripheralKey: AcquiredNotifyReader] = [:]
    /// What each consumer receives, whichever way it came.
    nonisolated let consumerInboxes = ConsumerInboxes()
    /// Agents registered with AgentManager1, by owner (unique name), and the owners that asked to
    /// be the default, oldest first (bluetoothd uses the first).
    var agents: [String: Agent] = [:]
    var defaultAgents: [String] = []
    var nextPairing = 0
    /// PMD writes left unanswered (an unpaired link): who called, the device, and what ends the wait.
    var unansweredWrites:
        [Int: (sender: String, device: ObjectPath, deadline: Double, end: CheckedContinuation<Void, Never>)] =
            [:]
    /// Numbers PMD stream starts, so that a stopped stream's late frame is not sent.
    var nextPMDGeneration = 0
    /// Numbers PMD commands, so that each runs after its own reply and in the order written.
    var nextPMDCommand = 0

    public init(scenario: Scenario, busAddress: String, log: SimulatorLog, timing: Timing = Timing()) {
        self.scenario = scenario
        self.busAddress = busAddress
        self.log = log
        self.timing = timing
        // Names and addresses come from the scenario: what cannot make an object path is left
        // out here, and start() refuses such a scenario with validation's message.
        for adapter in scenario.adapters {
            guard let path = try? BlueZName.root.appending(adapter.name) else { continue }
            adapters[adapter.name] = AdapterState(spec: adapter, path: path, powered: adapter.powered)
            adapterOrder.append(adapter.name)
        }
        for (index, spec) in scenario.devices.enumerated() {
            guard let address = SimulatedAddress(spec.address),
                let adapter = spec.adapter ?? scenario.adapters.first?.name,
                let path = try? BlueZName.root.appending(adapter).appending(address.pathComponent),
                let layout = try? GATTLayout(devicePath: path, device: spec)
            else { continue }
            devices[path] = DeviceState(
                index: index, spec: spec, address: address, path: path, adapter: adapter, layout: layout,
                generator: HeartRateGenerator(stream: spec.heartRate, maximumFrameLength: spec.mtu - 3),
                failuresLeft: spec.connectFailures, callFailuresLeft: spec.callFailures, battery: spec.battery
            )
            devices[path]?.paired = spec.paired
            devices[path]?.bonded = spec.paired && spec.bonds
        }
    }

    /// Connects to the bus, takes the name org.bluez and plays the scenario until `stop()`.
    /// Throws `ScenarioError` for a scenario that does not validate (ScenarioCatalog.load has
    /// checked the ones it loads; a scenario built or changed in code is checked here).
    public func start() async throws {
        try scenario.validate()
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
        await releasePeripherals()
        timeline?.cancel()
        watcher?.cancel()
        for path in devices.keys {
            stopNotifying(path)
            stopPMD(path, reason: "stopped")
            endPairing(path, .failed(BlueZError.authenticationCanceled))
        }
        endStalls()
        endUnansweredWrites()
        if let connection { await connection.close() }
        connection = nil
    }

    var now: Double { log.seconds }

    // MARK: - Serving

    func serve() async throws {
        let connection = try await Connection(address: busAddress)
        self.connection = connection
        connection.addObjectManager(at: .root, listingStandardInterfaces: true)
        try connection.export(agentManagerInterface(), at: BlueZName.root)
        for name in adapterOrder {
            guard let adapter = adapters[name] else { continue }
            try connection.export(
                adapterInterface(), at: adapter.path, properties: adapterProperties(adapter))
            if adapter.spec.peripheral { try exportPeripheralManagers(adapter) }
        }
        // bluetoothd keeps paired devices (and those the scenario says it knows) on disk.
        for (path, device) in devices where device.spec.known || device.paired {
            try exportDevice(path, rssi: false)
        }
        // Clients that leave the bus lose their discovery and notify sessions, as in bluetoothd.
        let leaving = try await connection.signals(
            matching: MatchRule(
                sender: .bus, interface: .bus, member: "NameOwnerChanged"))
        watcher = Task { [weak self] in
            for await signal in leaving {
                let message = signal.element
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
        let clients = self.clients
        return Method(name, input: input, output: output) { call in
            // Before any suspension: counted in bus order (see ClientTracker).
            clients.arrive(from: call.sender?.rawValue)
            defer { clients.finished() }
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
                        at: charPath)
                }
            }
        }
        endStalls(of: name)
        endUnansweredWrites(of: name)
        agentOwnerLeft(name)
        for (path, device) in devices where device.pairing?.sender == name {
            // create_bond_req_exit: the bonding is cancelled when its caller leaves the bus.
            endPairing(path, .failed(BlueZError.authenticationCanceled))
        }
        peripheralClientLeft(name)
        log.record("client-left", ["name": name])
        clients.left(name)
    }

    /// Waits (at most `timeout`) until every client that called has left the bus and each of its
    /// calls has been handled: hrm-sim calls this after its command exits, before it stops, so
    /// that a Disconnect sent without waiting for the reply still takes the link down (2 s).
    ///
    /// What bluetoothd would still take its time over (the 2 s of a Disconnect) happens at once
    /// from here on (`pause`): nobody is left to see the difference, and the prompt comes back
    /// as soon as the command's last calls are handled.
    public func settle(timeout: Duration = .seconds(3)) async {
        log.record("settle", ["pauses-cut-short": hurryWaiters.count])
        hurrying = true
        for waiter in hurryWaiters.values { waiter.resume() }
        hurryWaiters = [:]
        let clients = self.clients
        // Woken when settled; the other child only bounds the wait.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await clients.waitUntilSettled() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Waits `seconds`, as bluetoothd takes its time, or no longer once `settle` has begun.
    func pause(_ seconds: Double) async {
        if hurrying {
            // A call that came after the command had gone (a Disconnect still on its way):
            // carried through at once, and said so for the tests that check it.
            log.record("pause-skipped", ["seconds": seconds])
            return
        }
        let id = nextHurryWaiter
        nextHurryWaiter += 1
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            group.addTask { await self.hurried(id, seconds: seconds) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns when `settle` begins (or at once when it has, or when cancelled).
    private func hurried(_ id: Int, seconds: Double) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                } else if hurrying {
                    // `settle` began after `pause` looked and before this child started (the
                    // actor ran it in between): the pause is skipped, as one that came after.
                    log.record("pause-skipped", ["seconds": seconds])
                    continuation.resume()
                } else {
                    hurryWaiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    private func stopWaiting(_ id: Int) {
        hurryWaiters.removeValue(forKey: id)?.resume()
    }

    /// bluetoothd exits (the name and every object vanish at once, sockets close), then comes back.
    func restart(downFor: Double) async {
        log.record("restart", ["phase": "down"])
        down = true
        for path in devices.keys {
            stopNotifying(path)
            stopPMD(path, reason: "restart")
            endPairing(path, .failed(BlueZError.authenticationCanceled))
            closeAcquired(path, announce: false)
            devices[path]?.connected = false
            devices[path]?.servicesResolved = false
            devices[path]?.gattExported = false
            devices[path]?.exported = false
            devices[path]?.notifySessions = [:]
            devices[path]?.pendingConnect = nil
        }
        for name in adapterOrder { adapters[name]?.discoveryClients = [:] }
        agents = [:]
        defaultAgents = []
        endStalls()
        endUnansweredWrites()
        await releasePeripherals()
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
