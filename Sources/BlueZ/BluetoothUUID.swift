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
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        switch digits.count {
        case 4:
            guard let short = UInt16(digits, radix: 16) else { return nil }
            self.init(short)
        case 8:
            guard let value = UInt32(digits, radix: 16) else { return nil }
            self.init(uint32: value)
        case 36:
            let groups = digits.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12],
                groups.allSatisfy({ $0.allSatisfy(\.isHexDigit) })
            else { return nil }
            let hex = groups.joined()
            guard let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16)
            else {
                return nil
            }
            self.init(high: high, low: low)
        default:
            return nil
        }
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
