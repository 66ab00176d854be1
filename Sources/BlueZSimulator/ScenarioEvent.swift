import FoundationEssentials

extension Scenario {
    /// Something that happens to the simulated world, one case per kind. Events happen in the
    /// order listed, each when its one trigger comes (see `Trigger`).
    ///
    /// In JSON an event is one flat object: its trigger (`at`, `afterNotifications` or `after`),
    /// `type` and the fields of that type, e.g.
    /// `{ "afterNotifications": 5, "type": "adapter-power", "adapter": "hci0", "powered": false }`.
    /// An unknown `type`, a missing field or no single trigger is a decoding error; what the
    /// values mean (an adapter or device that exists, a percentage) is checked by `validate()`.
    public enum Event: Sendable, Equatable {
        /// `adapter-power`: the adapter (the first one when `adapter` is absent) goes off or on.
        case adapterPower(Trigger, adapter: String?, powered: Bool)
        /// `bluetoothd-restart`: bluetoothd exits and is back `downFor` seconds later (1 when absent).
        case bluetoothdRestart(Trigger, downFor: Double)
        /// `battery`: the strap with address `device` reports `percent` (Battery1's Percentage).
        case battery(Trigger, device: String, percent: Int)
        /// `device-appear`: the strap with address `device` starts advertising (if it was not
        /// already): an arrival tied to the stream rather than to a time (`appearAt`), which a
        /// client slowed down by a loaded machine could meet too early or too late.
        case appear(Trigger, device: String)

        /// When an event happens: `at` seconds into the run, right after the simulator's
        /// `afterNotifications`-th notification (over every strap), or `after` seconds after the
        /// event before it. Tied to the stream, an event comes at the same point of it however
        /// long a client took to connect.
        public enum Trigger: Sendable, Equatable {
            case at(Double)
            case afterNotifications(Int)
            case after(Double)
        }

        public var trigger: Trigger {
            switch self {
            case .adapterPower(let trigger, _, _), .bluetoothdRestart(let trigger, _),
                .battery(let trigger, _, _), .appear(let trigger, _):
                trigger
            }
        }

        /// The event's `type` in JSON.
        public var type: String {
            switch self {
            case .adapterPower: "adapter-power"
            case .bluetoothdRestart: "bluetoothd-restart"
            case .battery: "battery"
            case .appear: "device-appear"
            }
        }
    }
}

extension Scenario.Event: Codable {
    private enum CodingKeys: String, CodingKey {
        case at, afterNotifications, after, type, adapter, powered, downFor, device, percent
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let trigger = try Self.decodeTrigger(c, codingPath: decoder.codingPath)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "adapter-power":
            self = .adapterPower(
                trigger, adapter: try c.decodeIfPresent(String.self, forKey: .adapter),
                powered: try c.decode(Bool.self, forKey: .powered))
        case "bluetoothd-restart":
            self = .bluetoothdRestart(
                trigger, downFor: try c.decodeIfPresent(Double.self, forKey: .downFor) ?? 1)
        case "battery":
            self = .battery(
                trigger, device: try c.decode(String.self, forKey: .device),
                percent: try c.decode(Int.self, forKey: .percent))
        case "device-appear":
            self = .appear(trigger, device: try c.decode(String.self, forKey: .device))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: c,
                debugDescription:
                    "'\(type)' is not adapter-power, bluetoothd-restart, battery or device-appear")
        }
    }

    private static func decodeTrigger(
        _ c: KeyedDecodingContainer<CodingKeys>, codingPath: [any CodingKey]
    ) throws -> Trigger {
        var triggers: [Trigger] = []
        if let at = try c.decodeIfPresent(Double.self, forKey: .at) { triggers.append(.at(at)) }
        if let count = try c.decodeIfPresent(Int.self, forKey: .afterNotifications) {
            triggers.append(.afterNotifications(count))
        }
        if let after = try c.decodeIfPresent(Double.self, forKey: .after) { triggers.append(.after(after)) }
        guard triggers.count == 1, let trigger = triggers.first else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription:
                        "needs one of at, afterNotifications and after (\(triggers.count) given)"))
        }
        return trigger
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch trigger {
        case .at(let at): try c.encode(at, forKey: .at)
        case .afterNotifications(let count): try c.encode(count, forKey: .afterNotifications)
        case .after(let after): try c.encode(after, forKey: .after)
        }
        try c.encode(type, forKey: .type)
        switch self {
        case .adapterPower(_, let adapter, let powered):
            try c.encodeIfPresent(adapter, forKey: .adapter)
            try c.encode(powered, forKey: .powered)
        case .bluetoothdRestart(_, let downFor):
            try c.encode(downFor, forKey: .downFor)
        case .battery(_, let device, let percent):
            try c.encode(device, forKey: .device)
            try c.encode(percent, forKey: .percent)
        case .appear(_, let device):
            try c.encode(device, forKey: .device)
        }
    }
}
