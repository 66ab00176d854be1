package import Monitor
package import SessionLibrary
import Synchronization

/// Something outside HRMCLI that takes the session's events as they happen: a web client of
/// `hrm serve` (its bounded queue).
public protocol FeedListener: AnyObject, Sendable {
    /// One event as the JSON object `watch --json` prints, in the session's order, on the thread
    /// that sent the event: it must return at once (queue it, or drop the client).
    func receive(_ line: String)
}

/// What `hrm serve` serves: every event of the session, to every listener, as `watch --json`
/// prints it; and for a client that comes in the middle, the current state first (each strap's
/// last status, info, battery, measurement and HRV) and a snapshot for `/api/current`.
///
/// A sink of the session's pipeline: `receive` runs under the pipeline's lock, so a listener added
/// here gets the current state and then every later event, none twice and none missed.
public final class LiveFeed: Sendable {
    private struct State {
        package var listeners: [any FeedListener] = []
        package var straps = DeviceTable<StrapState>()
        /// The last status without a strap (`scanning`), until a strap has one.
        package var sessionStatus: String? = nil
    }

    /// A strap as a new client first sees it.
    package struct StrapState {
        /// The host that published it (`--mqtt-team`); nil for a strap watched here.
        package var source: String? = nil
        /// Its address, when the table's key is not (a remote strap's key names its host too).
        package var device: String? = nil
        package var status: String? = nil
        package var state: String? = nil
        package var info: String? = nil
        package var name: String? = nil
        package var battery: Int? = nil
        package var batteryLine: String? = nil
        package var measurement: String? = nil
        package var hrv: String? = nil
        package var bpm = Tally()
    }

    /// Min, average and max BPM of the session so far (heart rates above 0).
    package struct Tally {
        package var count = 0
        package var sum = 0
        package var minimum: Int? = nil
        package var maximum: Int? = nil

        package mutating func add(_ bpm: Int) {
            guard bpm > 0 else { return }
            count += 1
            sum += bpm
            minimum = min(minimum ?? bpm, bpm)
            maximum = max(maximum ?? bpm, bpm)
        }
    }

    private let state = Mutex(State())

    public init() {}

    /// Adds `listener` and returns the lines it gets first: the current state, oldest first.
    public func add(_ listener: any FeedListener) -> [String] {
        state.withLock { state in
            state.listeners.append(listener)
            var lines: [String] = []
            if let status = state.sessionStatus { lines.append(status) }
            for device in state.straps.devices {
                guard let strap = state.straps[device] else { continue }
                lines += [strap.status, strap.info, strap.batteryLine, strap.measurement, strap.hrv]
                    .compactMap { $0 }
            }
            return lines
        }
    }

    public func remove(_ listener: any FeedListener) {
        state.withLock { state in state.listeners.removeAll { $0 === listener } }
    }

    /// Listeners now.
    public var listenerCount: Int { state.withLock { $0.listeners.count } }

    /// `/api/current`: `{"straps":[{"device","name","state","battery","measurement","session"}]}`.
    public func current() -> String {
        state.withLock { state in
            var straps: [String] = []
            for device in state.straps.devices {
                guard let strap = state.straps[device] else { continue }
                var json = JSONLine()
                json.add("device", strap.device ?? device)
                if let source = strap.source { json.add("source", source) }
                json.add("name", strap.name)
                json.add("state", strap.state)
                json.add("battery", strap.battery)
                var session = JSONLine()
                session.add("measurements", strap.bpm.count)
                session.add("min_bpm", strap.bpm.minimum)
                session.add(
                    "avg_bpm",
                    strap.bpm.count > 0
                        ? HRVRendering.rounded(Double(strap.bpm.sum) / Double(strap.bpm.count)) : nil)
                session.add("max_bpm", strap.bpm.maximum)
                straps.append(
                    json.line.dropLast() + #","measurement":"# + (strap.measurement ?? "null")
                        + #","session":"#
                        + session.line + "}")
            }
            return #"{"straps":["# + straps.joined(separator: ",") + "]}"
        }
    }

    /// An event another hrm host published (`hrm serve --mqtt-team`): `object` is what `watch
    /// --json` printed there, `line` the same with `source` first. The host's straps are kept
    /// apart from any other host's, even with the same address.
    package func take(remote object: JSONValue, line: String, source: String) {
        guard let type = object["type"]?.string else { return }
        state.withLock { state in
            if let device = object["device"]?.string {
                state.straps["\(source)/\(device)", default: StrapState(source: source, device: device)]
                    .update(type: type, object, line)
            }
            for listener in state.listeners { listener.receive(line) }
        }
    }

    /// A host went offline (its will, or a clean stop): each of its straps gets a `disconnected`
    /// status, so that pages show them as gone rather than frozen.
    package func hostOffline(_ source: String, at time: String) {
        state.withLock { state in
            for key in state.straps.devices {
                guard let strap = state.straps[key], strap.source == source, strap.state != "disconnected"
                else {
                    continue
                }
                var json = JSONLine()
                json.add("source", source)
                json.add("type", "status")
                json.add("time", time)
                json.add("device", strap.device)
                json.add("state", "disconnected")
                json.add("detail", "the host is offline")
                let line = json.line
                // As if the host had published it: the same update as a remote status.
                state.straps[key, default: strap].update(
                    type: "status", .object([(key: "state", value: .string("disconnected"))]), line)
                for listener in state.listeners { listener.receive(line) }
            }
        }
    }

    package func take(_ event: MonitorEvent) {
        let line = MonitorEventJSON.line(event)
        state.withLock { state in
            if let device = event.device {
                state.straps.update(device, default: StrapState()) { $0.update(event, line) }
            } else if case .status = event.kind {
                state.sessionStatus = line
            }
            for listener in state.listeners { listener.receive(line) }
        }
    }
}

extension LiveFeed.StrapState {
    /// As `update`, from the JSON object another host published.
    fileprivate mutating func update(type: String, _ object: JSONValue, _ line: String) {
        switch type {
        case "status":
            status = line
            state = object["state"]?.string
            if state != "connected" { measurement = nil }
        case "info":
            info = line
            name = object["name"]?.string ?? name
            if case .number(let percent)? = object["battery"], (0...100).contains(percent) {
                battery = Int(percent)
            }
        case "battery":
            batteryLine = line
            if case .number(let percent)? = object["percent"], (0...100).contains(percent) {
                battery = Int(percent)
            }
        case "measurement":
            measurement = line
            state = "connected"
            if case .number(let value)? = object["bpm"], (0...65535).contains(value) { bpm.add(Int(value)) }
        case "hrv":
            hrv = line
        default:
            break
        }
    }

    fileprivate mutating func update(_ event: MonitorEvent, _ line: String) {
        switch event.kind {
        case .status(let state, _):
            status = line
            self.state = state.rawValue
            // A measurement from before a drop is not the heart rate now.
            if state != .connected { measurement = nil }
        case .info(let name, _, let battery, _, _, _):
            info = line
            self.name = name ?? self.name
            if let battery { self.battery = battery }
        case .battery(let percent):
            battery = percent
            batteryLine = line
        case .measurement(let m, _):
            measurement = line
            bpm.add(Int(m.heartRate))
        case .hrv:
            hrv = line
        case .alert, .summary, .device, .error, .relay, .ecg, .acc, .ecgBeat:
            break
        }
    }
}

/// `hrm serve`'s feed as a session's output: immediate, because the feed only hands each line
/// to its clients' bounded queues (a client that cannot keep up is dropped, never waited for).
package struct LiveFeedOutput: OutputProvider {
    /// The feed the server reads.
    package let feed: LiveFeed

    package func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        SessionOutput(delivery: .immediate(LiveFeedSink(feed: feed)))
    }

    /// Every stored property, as given.
    package init(feed: LiveFeed) {
        self.feed = feed
    }
}

/// The feed as one of the session's sinks.
package struct LiveFeedSink: EventSink {
    package let feed: LiveFeed

    package func receive(_ event: MonitorEvent) { feed.take(event) }
    package func finish() async {}
}
