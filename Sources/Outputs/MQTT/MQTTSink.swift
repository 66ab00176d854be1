package import MQTT
package import Monitor
import SessionLibrary
import Synchronization

/// Publishes a session to an MQTT broker (the topic contract is `MQTTTopics`).
///
/// `receive` runs on the pipeline's thread: it renders the payloads and hands them to the MQTT
/// client's outbox, which never blocks (the client's own thread does the network). While the
/// broker is away the outbox keeps the messages, in order, and sends them when it is back; the
/// strap's stream never waits for the broker.
package final class MQTTSink: EventSink {
    private struct State {
        /// Straps in the order they came, with what they said about themselves.
        package var straps: [HomeAssistantDiscovery.Strap] = []
        package var connectedBefore = false
    }

    package let settings: MQTTSettings
    private let client: MQTTClient
    private let discovery: HomeAssistantDiscovery?
    private let state = Mutex(State())
    private let command: String
    private let report: @Sendable (MonitorEvent) -> Void
    /// Where the sink says the broker is back, and what it could not send.
    private let console: any SessionConsole
    private let watcher: Mutex<Task<Void, Never>?> = Mutex(nil)
    /// Each strap's topics (`MQTTTopics.Leaf` order), made once: a notification looks its two
    /// up rather than lower-casing the address and joining the levels again.
    private let deviceTopics = Mutex<[String: [String]]>([:])

    /// Held while the broker is away: 10 minutes of 1 Hz from 8 straps (two messages a
    /// measurement), about 2 MB at most.
    package static let outboxCapacity = 20_000

    /// How long the broker's answers may wait to be read (`MQTTOptions.readDelay`): a second, the
    /// client's keep-alive turn.
    package static let readDelay: Duration = .seconds(1)

    /// Connects to the broker (a clear error now rather than a silent failure later: bad
    /// credentials, nothing listening, a TLS problem), says `online`, and starts following the
    /// connection. `report` gets the session's events about the broker (lost, messages dropped).
    package static func connect(
        _ settings: MQTTSettings, command: String, console: any SessionConsole = SilentConsole(),
        report: @escaping @Sendable (MonitorEvent) -> Void
    ) async throws(MQTTError) -> MQTTSink {
        var options = MQTTOptions(clientID: "hrm-\(settings.topics.host)-\(ProcessID.current)")
        options.will = MQTTMessage(topic: settings.topics.status, text: "offline", retain: true)
        options.caFile = settings.caFile
        options.outboxCapacity = outboxCapacity
        // The sink publishes and subscribes only to Home Assistant's rare birth message: the
        // broker's acknowledgement of a measurement is read when the next one is handed over
        // (or within a second), not with a wake-up of its own.
        options.readDelay = readDelay
        let client = try MQTTClient(settings.url, options: options)
        do throws(MQTTError) {
            try await client.connect()
        } catch {
            await client.close(within: .zero)
            throw error
        }
        return MQTTSink(
            settings: settings, client: client, command: command, console: console, report: report)
    }

    private init(
        settings: MQTTSettings, client: MQTTClient, command: String, console: any SessionConsole,
        report: @escaping @Sendable (MonitorEvent) -> Void
    ) {
        self.console = console
        self.settings = settings
        self.client = client
        self.command = command
        self.report = report
        discovery = settings.discoveryPrefix.map {
            HomeAssistantDiscovery(prefix: $0, topics: settings.topics)
        }
    }

    private var topics: MQTTTopics { settings.topics }

    /// The session begins: `online`, Home Assistant's birth topic, and the task that follows
    /// the connection (owned here until `finish`, which ends and awaits it).
    package func start() {
        client.publish(MQTTMessage(topic: topics.status, text: "online", retain: true))
        if let discovery { client.subscribe(discovery.birthTopic) }
        let task = Task { [self] in
            for await event in client.events { handle(event) }
        }
        watcher.withLock { $0 = task }
    }

    /// What the client says about the broker.
    private func handle(_ event: MQTTEvent) {
        switch event {
        case .connected:
            let again = state.withLock { state in
                defer { state.connectedBefore = true }
                return state.connectedBefore
            }
            guard again else { return }
            // The broker published the will when the link went: online again, first thing after
            // what waited.
            client.publish(MQTTMessage(topic: topics.status, text: "online", retain: true))
            console.say(
                "hrm \(command): mqtt: connected to \(settings.url) again; sending \(client.outboxCount) queued messages"
            )
        case .disconnected(let reason):
            report(
                MonitorEvent(
                    device: nil,
                    kind: .error(
                        code: .mqttDisconnected,
                        message:
                            "lost the MQTT broker at \(settings.url) (\(reason)): keeping up to \(Self.outboxCapacity) messages until it is back",
                        hex: nil)))
        case .dropped(let count):
            report(
                MonitorEvent(
                    device: nil,
                    kind: .error(
                        code: .mqttDropped,
                        message:
                            "the MQTT broker was away too long: \(count) oldest message\(count == 1 ? "" : "s") dropped",
                        hex: nil)))
        case .message(let message):
            guard let discovery, message.topic == discovery.birthTopic,
                String(decoding: message.payload, as: UTF8.self) == "online"
            else { return }
            for strap in state.withLock({ $0.straps }) { publishDiscovery(strap) }
        }
    }

    package func receive(_ event: MonitorEvent) {
        guard let device = event.device else {
            if case .status(.stopped, _) = event.kind {
                for strap in state.withLock({ $0.straps }) {
                    publish(event.followedBy(event.kind, device: strap.address), .state, retain: true)
                }
            }
            return
        }
        switch event.kind {
        case .measurement(let m, _):
            // One hand-over for both: one wake-up of the client's thread, one TCP segment.
            client.publish(contentsOf: [
                message(event, device, .measurement, retain: false),
                // QoS 0: the next measurement replaces it within a second or so, and an
                // acknowledgement per notification is a wake-up and a read per notification.
                MQTTMessage(
                    topic: topic(device, .bpm), text: String(m.heartRate), qos: .atMostOnce, retain: true),
            ])
        case .status:
            know(device)
            publish(event, .state, retain: true)
        case .info(let name, _, let battery, let manufacturer, let model, _):
            let strap = HomeAssistantDiscovery.Strap(
                address: device, name: name, manufacturer: manufacturer, model: model)
            know(device, strap)
            publish(event, .info, retain: true)
            if let battery { publishBattery(battery, of: device) }
            publishDiscovery(strap)
        case .battery(let percent):
            publishBattery(percent, of: device)
        case .hrv:
            publish(event, .hrv, retain: true)
        case .summary:
            publish(event, .summary, retain: true)
        case .alert, .device, .error, .relay, .ecg, .acc, .ecgBeat:
            break
        }
    }

    private func publish(_ event: MonitorEvent, _ leaf: MQTTTopics.Leaf, retain: Bool) {
        guard let device = event.device else { return }
        client.publish(message(event, device, leaf, retain: retain))
    }

    /// `event`'s JSON line on `device`'s `leaf`.
    private func message(
        _ event: MonitorEvent, _ device: String, _ leaf: MQTTTopics.Leaf, retain: Bool
    ) -> MQTTMessage {
        MQTTMessage(topic: topic(device, leaf), text: MonitorEventJSON.line(event), retain: retain)
    }

    /// `device`'s topic for `leaf`, as `MQTTTopics.device` makes it.
    private func topic(_ device: String, _ leaf: MQTTTopics.Leaf) -> String {
        topics(of: device)[Self.leaves.firstIndex(of: leaf) ?? 0]
    }

    private static let leaves = MQTTTopics.Leaf.allCases

    /// `device`'s topics in `leaves` order. The cache holds a session's straps; past 64 addresses
    /// (an `--all` among many straps) the others are made each time.
    private func topics(of device: String) -> [String] {
        if let known = deviceTopics.withLock({ $0[device] }) { return known }
        let made = Self.leaves.map { topics.device(device, $0) }
        deviceTopics.withLock { cache in
            if cache.count < 64 { cache[device] = made }
        }
        return made
    }

    /// The retained plain number Home Assistant's battery sensor reads.
    private func publishBattery(_ percent: Int, of device: String) {
        client.publish(
            MQTTMessage(topic: topic(device, .battery), text: String(percent), retain: true))
    }

    private func publishDiscovery(_ strap: HomeAssistantDiscovery.Strap) {
        guard let discovery else { return }
        for config in discovery.configs(for: strap) {
            client.publish(MQTTMessage(topic: config.topic, text: config.payload, retain: true))
        }
    }

    /// Remembers a strap (and, with `strap`, what it said about itself).
    private func know(_ device: String, _ strap: HomeAssistantDiscovery.Strap? = nil) {
        state.withLock { state in
            if let index = state.straps.firstIndex(where: { $0.address == device }) {
                if let strap { state.straps[index] = strap }
            } else {
                state.straps.append(strap ?? HomeAssistantDiscovery.Strap(address: device))
            }
        }
    }

    /// `offline` after everything queued, then a clean disconnect (no will); 5 s at most for
    /// what is still queued, then given up with a word on stderr.
    package func finish() async {
        await client.close(
            last: [MQTTMessage(topic: topics.status, text: "offline", retain: true)], within: .seconds(5))
        let left = client.outboxCount
        if left > 0 {
            console.say(
                "hrm \(command): mqtt: \(left) message\(left == 1 ? "" : "s") could not be sent to \(settings.url) before exiting"
            )
        }
        // The client's events ended with close(): the watcher ends with them.
        let task = watcher.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}
