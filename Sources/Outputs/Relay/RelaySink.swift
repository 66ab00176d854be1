import BlueZ
import Monitor
import Synchronization

/// The relay as one of the session's sinks: `receive` only hands the event to a bounded stream
/// (the newest kept), and a task of the relay's own sends what it must to bluetoothd, so that
/// neither bluetoothd nor a consumer can delay the strap or another output. Measurements go out
/// as the strap sent them (the raw payload); a malformed frame never becomes a measurement, so it
/// is not relayed; while the strap is away nothing is sent.
final class RelaySink: EventSink {
    /// Events that may wait for the relay's task: at 200 notifications a second, more than a second.
    static let capacity = 256

    private let client: BlueZClient
    private let peripheral: Peripheral
    private let report: @Sendable (MonitorEvent) -> Void
    private let events: AsyncStream<MonitorEvent>
    private let input: AsyncStream<MonitorEvent>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let state = Mutex(RelayLinks())
    /// Measurements' payloads taken under the pipeline's lock, sent once it is released.
    /// With them, the run of values bluetoothd did not take.
    private let outbox = Mutex<(payloads: [[UInt8]], backlog: RelayBacklog)>(([], RelayBacklog()))
    /// Events the full queue dropped since the relay's task last said so.
    private let dropped = Mutex(0)
    /// No `--relay-name`: the advertised name becomes "hrm" and the strap's once `info` gives it.
    private let namesAfterStrap: Bool

    init(
        client: BlueZClient, peripheral: Peripheral, namesAfterStrap: Bool,
        report: @escaping @Sendable (MonitorEvent) -> Void
    ) {
        self.client = client
        self.peripheral = peripheral
        self.namesAfterStrap = namesAfterStrap
        self.report = report
        (events, input) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.capacity))
    }

    func start() {
        // Each task holds the sink until `finish` ends it.
        let relaying = Task { [events] in
            for await event in events { self.relay(event) }
        }
        let asks = Task { [peripheral, report] in
            for await ask in peripheral.events {
                guard case .notifying(let uuid, let on) = ask, uuid == RelayProfile.measurement else {
                    continue
                }
                // bluetoothd (5.66) does not say whose subscription it is, and a consumer's
                // connection can reach hrm after its subscription: hrm names nobody rather than
                // guess (a loaded machine once showed the guess wrong).
                report(
                    MonitorEvent(device: nil, kind: .relay(on ? .subscribed : .unsubscribed, consumer: nil)))
            }
        }
        let links = Task { [client, peripheral, report] in
            for await centrals in await client.centrals(on: peripheral.adapter) {
                let changes = self.state.withLock { $0.update(centrals.map(\.description)) }
                for (address, connected) in changes {
                    report(
                        MonitorEvent(
                            device: nil,
                            kind: .relay(
                                connected ? .consumerConnected : .consumerDisconnected, consumer: address)))
                }
            }
        }
        // bluetoothd restarted: it forgot the relay, which registers again once it is back.
        let returns = Task { [client, peripheral, report] in
            var offered = true
            for await now in await client.peripheralRole(on: peripheral.adapter) {
                defer { offered = now }
                guard now, !offered, let failure = await peripheral.registerAgain() else { continue }
                report(
                    MonitorEvent(
                        device: nil,
                        kind: .error(
                            code: EventErrorCode(failure.code), message: "relay: \(failure.message)", hex: nil
                        )))
            }
        }
        tasks.withLock { $0 = [relaying, asks, links, returns] }
    }

    func receive(_ event: MonitorEvent) {
        switch event.kind {
        case .measurement:
            // Sent in `afterSend`, on the sender's thread: a hop to the relay's task cost more
            // than the sending, two thread wake-ups per notification (Benchmarks/Relay/README.md).
            guard let device = event.device, let payload = event.payload,
                state.withLock({ $0.relays(device) })
            else { return }
            outbox.withLock { $0.payloads.append(payload) }
        case .battery, .info:
            if case .dropped = input.yield(event) { dropped.withLock { $0 += 1 } }
        default: break
        }
    }

    /// Sends what `receive` kept: one datagram each into the socket bluetoothd took by
    /// AcquireNotify (or one PropertiesChanged each where it asked by StartNotify); neither ever
    /// blocks. Under the outbox's lock, so that values taken by two threads still go out in order.
    /// A value bluetoothd did not take while a central is subscribed (its socket full) is not
    /// relayed: the first such is said at once, and how many when bluetoothd takes values again.
    func afterSend() {
        let change = outbox.withLock { outbox -> RelayBacklog.Change? in
            defer { outbox.payloads.removeAll(keepingCapacity: true) }
            guard !outbox.payloads.isEmpty,
                let measurement = peripheral.characteristic(RelayProfile.measurement)
            else { return nil }
            var change: RelayBacklog.Change? = nil
            for payload in outbox.payloads {
                let sent = peripheral.notify(measurement, payload)
                let wanted = sent || peripheral.isNotifying(measurement)
                if wanted, let now = outbox.backlog.record(sent: sent) { change = now }
            }
            return change
        }
        // Outside the outbox's lock: the report goes through the pipeline, which calls afterSend.
        guard let change else { return }
        let message =
            switch change {
            case .stalled: "relay: bluetoothd takes no values: not relayed until it does"
            case .resumed(let lost): "relay: bluetoothd takes values again: \(lost) not relayed meanwhile"
            }
        report(MonitorEvent(device: nil, kind: .error(code: .relayDropped, message: message, hex: nil)))
    }

    /// Advertises "hrm" and the strap's name, on a task of its own (two calls to bluetoothd that
    /// measurements need not wait for); a refusal is reported, and nothing is advertised then.
    private func rename(after name: String, device: String) {
        let settings = RelayProfile.advertisement(named: "\(RelaySettings.defaultName) \(name)")
        guard settings != peripheral.advertisement else { return }
        let renaming = Task { [peripheral, report] in
            guard let failure = await peripheral.advertise(settings) else { return }
            report(
                MonitorEvent(
                    device: device,
                    kind: .error(
                        code: EventErrorCode(failure.code), message: "relay: \(failure.message)", hex: nil)))
        }
        tasks.withLock { $0.append(renaming) }
    }

    /// Takes the advertisement and the application back (once; later calls return at once).
    func unregister() async {
        await peripheral.unregister()
    }

    func finish() async {
        input.finish()
        await unregister()
        let running = tasks.withLock { $0 }
        for task in running { task.cancel() }
        for task in running { await task.value }
        await client.close()
    }

    /// One event, on the relay's task: a measurement's payload as it came, a battery level, and
    /// what `info` says of the strap for reads.
    private func relay(_ event: MonitorEvent) {
        // Said by the relay's task once it takes events again, never on the sender's thread.
        let lost = dropped.withLock { count in
            defer { count = 0 }
            return count
        }
        if lost > 0 {
            report(
                MonitorEvent(
                    device: event.device,
                    kind: .error(
                        code: .relayDropped,
                        message:
                            "relay: bluetoothd took values more slowly than the strap sent them: \(lost) not relayed",
                        hex: nil)))
        }
        guard let device = event.device, state.withLock({ $0.relays(device) }) else { return }
        switch event.kind {
        case .battery(let percent):
            guard let level = peripheral.characteristic(RelayProfile.batteryLevel) else { return }
            peripheral.notify(level, [UInt8(clamping: percent)])
        case .info(let name, let location, let battery, _, let model, _):
            if namesAfterStrap, let name, !name.isEmpty { rename(after: name, device: device) }
            if let location, let handle = peripheral.characteristic(RelayProfile.location) {
                peripheral.update(handle, [location.rawValue])
            }
            if let battery, let handle = peripheral.characteristic(RelayProfile.batteryLevel) {
                peripheral.update(handle, [UInt8(clamping: battery)])
            }
            if let model, let handle = peripheral.characteristic(RelayProfile.model) {
                peripheral.update(handle, Array(model.utf8))
            }
        default:
            break
        }
    }
}

/// The relay's view of who is there: the strap it relays (the first that sent anything; with
/// several straps the others are not relayed) and the centrals connected to it.
struct RelayLinks: Sendable {
    private(set) var strap: String? = nil
    private(set) var centrals: Set<String> = []

    /// Whether `device`'s events are relayed: the first strap heard from, only.
    mutating func relays(_ device: String) -> Bool {
        if strap == nil { strap = device }
        return strap == device
    }

    /// Takes the centrals connected now; returns who came (true) and who went (false), in
    /// address order, the strap never among them.
    mutating func update(_ now: [String]) -> [(String, Bool)] {
        let current = Set(now).subtracting(strap.map { [$0] } ?? [])
        let came = current.subtracting(centrals).sorted().map { ($0, true) }
        let went = centrals.subtracting(current).sorted().map { ($0, false) }
        centrals = current
        return went + came
    }
}

/// Whether bluetoothd is taking the relay's values: a run of values it did not take begins
/// (`stalled`, said at once) and ends (`resumed`, with how many were lost), each said once.
struct RelayBacklog: Sendable, Equatable {
    /// What changed with the last value.
    enum Change: Sendable, Equatable {
        case stalled
        case resumed(lost: Int)
    }

    private(set) var lost = 0

    /// One value sent (`sent`) or not taken; returns what changed, if anything.
    mutating func record(sent: Bool) -> Change? {
        if sent {
            defer { lost = 0 }
            return lost > 0 ? .resumed(lost: lost) : nil
        }
        lost += 1
        return lost == 1 ? .stalled : nil
    }
}
