/// A Bluetooth UUID. BlueZ always speaks the 128-bit form (`0000180d-0000-1000-8000-00805f9b34fb`);
/// people and hrm's JSON use the 16-bit short form (`180d`) for assigned numbers.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The Bluetooth Base UUID's lower 96 bits: `xxxxxxxx-0000-1000-8000-00805f9b34fb`.
    private static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    private static let baseHighLow32: UInt64 = 0x0000_1000

    /// The UUID's first 64 bits (big-endian: `0000180d-0000-1000` as 0x0000180D00001000).
    public let high: UInt64
    /// The UUID's last 64 bits.
    public let low: UInt64

    /// A 128-bit UUID from its two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit assigned number, such as 0x180D.
    public init(_ short: UInt16) {
        self.init(high: UInt64(short) << 32 | Self.baseHighLow32, low: Self.baseLow)
    }

    /// A 32-bit assigned number.
    public init(uint32 value: UInt32) {
        self.init(high: UInt64(value) << 32 | Self.baseHighLow32, low: Self.baseLow)
    }

    /// Parses `180d`, `0x180D`, `0000180d` or the full `0000180d-0000-1000-8000-00805f9b34fb`,
    /// in either case.
    public init?(_ text: some StringProtocol) {
        // Read as bytes: every characteristic, service and device of an object tree brings one
        // (tens at each connection), and reading them as Characters cost 50,000 instructions each.
        let parsed =
            text.utf8.withContiguousStorageIfAvailable { Self.parse($0) }
            ?? Array(text.utf8).withUnsafeBufferPointer {
                Self.parse($0)
            }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The UUID `utf8` spells, in any of `init?(_:)`'s forms; nil for anything else.
    private static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> BluetoothUUID? {
        var digits = utf8[...]
        if digits.count > 2, digits.first == UInt8(ascii: "0"),
            digits[digits.startIndex + 1] | 0x20 == UInt8(ascii: "x")
        {
            digits = digits.dropFirst(2)
        }
        switch digits.count {
        case 4:
            return hexValue(digits).map { BluetoothUUID(UInt16(truncatingIfNeeded: $0)) }
        case 8:
            return hexValue(digits).map { BluetoothUUID(uint32: UInt32(truncatingIfNeeded: $0)) }
        case 36:
            // 8-4-4-4-12 hex digits: the dashes where they belong, the first 16 digits the high half.
            let start = digits.startIndex
            let dash = UInt8(ascii: "-")
            guard digits[start + 8] == dash, digits[start + 13] == dash, digits[start + 18] == dash,
                digits[start + 23] == dash
            else { return nil }
            func group(_ from: Int, _ to: Int) -> UInt64? { hexValue(digits[start + from..<start + to]) }
            guard let first = group(0, 8), let second = group(9, 13), let third = group(14, 18),
                let fourth = group(19, 23), let last = group(24, 36)
            else { return nil }
            let high = first << 32 | second << 16 | third
            let low = fourth << 48 | last
            return BluetoothUUID(high: high, low: low)
        default:
            return nil
        }
    }

    /// `digits` (16 at most) as one hexadecimal number; nil when one is not a hex digit.
    private static func hexValue(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64? {
        var value: UInt64 = 0
        for byte in digits {
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }

    /// The 16-bit assigned number, when this UUID is one.
    public var shortValue: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32, high >> 48 == 0 else {
            return nil
        }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The lower-case 128-bit form BlueZ uses.
    public var description: String {
        let hex = Self.hex(high, width: 16) + Self.hex(low, width: 16)
        let chars = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
    }

    /// `180d` for a 16-bit assigned number, else the 128-bit form.
    public var shortDescription: String {
        if let shortValue { return Self.hex(UInt64(shortValue), width: 4) }
        return description
    }

    /// Numeric order of the 128 bits.
    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    private static func hex(_ value: UInt64, width: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(width - text.count, 0)) + text
    }
}
