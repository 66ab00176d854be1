import Monitor
import Outputs
import SessionLibrary

/// What `hrm team` knows of every strap on every host, from the retained and live messages of
/// the topic contract (`MQTTTopics`). Pure: messages in, rows out; the command does the I/O.
struct TeamBoard {
    struct Row: Equatable {
        var host: String
        /// The device level of the topic (`c0ffee000001`).
        var device: String
        var address: String? = nil
        var name: String? = nil
        var bpm: Int? = nil
        var zone: Int? = nil
        var state: String? = nil
        /// When the last measurement came, in this process's monotonic milliseconds.
        var lastSample: Int64? = nil
    }

    /// What a message told the board, for the command to act on.
    enum Update: Equatable {
        /// A measurement: its payload with the host named (`source`), for `--json`.
        case measurement(row: Row, json: String)
        case changed
        case ignored
    }

    /// How many straps, and how many hosts, the board keeps at most: a broker can hold any number
    /// of retained messages (anyone allowed to publish can fill it), and a team is a few dozen.
    static let defaultCapacity = 1000

    let prefix: String
    let capacity: Int
    private(set) var rows: [Row] = []
    /// Each host's `online` / `offline`, and since when (this process's monotonic milliseconds)
    /// it has been offline as far as the board knows: a retained `offline` counts from when it
    /// came, since the message carries no time.
    private(set) var hosts: [(host: String, online: Bool, offlineSince: Int64?)] = []
    /// Straps and hosts not kept because the board was full.
    private(set) var refused = 0

    init(prefix: String, capacity: Int = TeamBoard.defaultCapacity) {
        self.prefix = prefix
        self.capacity = capacity
    }

    /// Takes one message. Whatever it carries (it comes from the network), the board stays
    /// whole: a payload that is not what hrm publishes is ignored.
    mutating func take(topic: String, payload: [UInt8], at now: Int64) -> Update {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.first == prefix else { return .ignored }
        let text = String(decoding: payload, as: UTF8.self)
        if levels.count == 3, levels[2] == "status" {
            let online = text == "online"
            if let index = hosts.firstIndex(where: { $0.host == levels[1] }) {
                if hosts[index].online != online { hosts[index].offlineSince = online ? nil : now }
                hosts[index].online = online
            } else if hosts.count < capacity {
                hosts.append((levels[1], online, online ? nil : now))
            } else {
                refused += 1
                return .ignored
            }
            return .changed
        }
        guard levels.count == 4, let leaf = MQTTTopics.Leaf(rawValue: levels[3]) else { return .ignored }
        let (host, device) = (levels[1], levels[2])
        // A row is made only for a payload the board takes, and only while there is room.
        let known = rows.firstIndex { $0.host == host && $0.device == device }
        if known == nil && rows.count >= capacity {
            if leaf == .measurement || leaf == .state || leaf == .info { refused += 1 }
            return .ignored
        }
        switch leaf {
        case .measurement:
            guard let json = try? JSONValue.parse(text), case .object = json,
                case .number(let bpm)? = json["bpm"], bpm >= 0, bpm <= 65535
            else { return .ignored }
            let index = known ?? appendRow(host: host, device: device)
            rows[index].bpm = Int(bpm)
            if case .number(let zone)? = json["zone"], zone >= 0, zone < 100 { rows[index].zone = Int(zone) }
            rows[index].address = json["device"]?.string ?? rows[index].address
            rows[index].lastSample = now
            rows[index].state = "connected"
            return .measurement(row: rows[index], json: Self.naming(host, in: json))
        case .state:
            guard let json = try? JSONValue.parse(text), let state = json["state"]?.string else {
                return .ignored
            }
            let index = known ?? appendRow(host: host, device: device)
            rows[index].state = state
            if state != "connected" { rows[index].bpm = nil }
            return .changed
        case .info:
            guard let json = try? JSONValue.parse(text), case .object = json else { return .ignored }
            let index = known ?? appendRow(host: host, device: device)
            rows[index].name = json["name"]?.string ?? rows[index].name
            rows[index].address = json["device"]?.string ?? rows[index].address
            return .changed
        case .bpm, .battery, .hrv, .summary:
            return .ignored
        }
    }

    private mutating func appendRow(host: String, device: String) -> Int {
        rows.append(Row(host: host, device: device))
        return rows.count - 1
    }

    func online(_ host: String) -> Bool {
        hosts.first { $0.host == host }?.online ?? true
    }

    /// The rows a table shows at `now`: a host offline for `forgetAfter` or longer is left out
    /// (an old run's retained messages would otherwise stay in the table for ever); it comes
    /// back if it says `online` again.
    func shown(at now: Int64, forgetAfter: Int64) -> [Row] {
        let gone = Set(
            hosts.filter { host in host.offlineSince.map { now - $0 >= forgetAfter } ?? false }.map(\.host))
        return gone.isEmpty ? rows : rows.filter { !gone.contains($0.host) }
    }

    /// The object as `watch --json` printed it, with the host that published it first
    /// (`{"source":"HOST",...}`; a `source` of its own is the topic's host's). Written again from
    /// what was parsed, never spliced from the payload: whatever white space or line breaks a
    /// publisher put in, it is one line of valid JSON.
    static func naming(_ host: String, in object: JSONValue) -> String {
        guard case .object(let members) = object else { return object.text }
        return JSONValue.object(
            [(key: "source", value: .string(host))] + members.filter { $0.key != "source" }
        )
        .text
    }
}
