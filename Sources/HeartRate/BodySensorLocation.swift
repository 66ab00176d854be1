/// Body Sensor Location (0x2A38): where the sensor is worn, one byte.
///
/// Values 7-255 are reserved for future use by the specification. They are kept as
/// `.reserved(n)` rather than folded into `.other`, so that a newer sensor is reported as what it
/// says rather than as something it did not say.
public enum BodySensorLocation: Hashable, Sendable {
    /// 0: a location the specification does not name.
    case other
    /// 1: chest (a strap).
    case chest
    /// 2: wrist (a watch).
    case wrist
    /// 3: finger.
    case finger
    /// 4: hand.
    case hand
    /// 5: ear lobe.
    case earLobe
    /// 6: foot.
    case foot
    /// 7-255, reserved for future use; the byte as sent.
    case reserved(UInt8)

    /// The location a characteristic byte stands for; 7-255 become `.reserved`.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .chest
        case 2: self = .wrist
        case 3: self = .finger
        case 4: self = .hand
        case 5: self = .earLobe
        case 6: self = .foot
        default: self = .reserved(rawValue)
        }
    }

    /// The characteristic byte: 0-6, or the reserved value as sent.
    public var rawValue: UInt8 {
        switch self {
        case .other: 0
        case .chest: 1
        case .wrist: 2
        case .finger: 3
        case .hand: 4
        case .earLobe: 5
        case .foot: 6
        case .reserved(let value): value
        }
    }

    /// The stable identifier used in JSON output: `"chest"`, `"ear_lobe"`, `"reserved(9)"`.
    public var identifier: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "ear_lobe"
        case .foot: "foot"
        case .reserved(let value): "reserved(\(value))"
        }
    }
}
