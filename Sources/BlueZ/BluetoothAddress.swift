/// A Bluetooth device address, `AA:BB:CC:DD:EE:FF`.
///
/// BlueZ spells it three ways: `Address` properties with colons, object paths with underscores
/// (`dev_AA_BB_CC_DD_EE_FF`) and, for an unnamed device's Alias, dashes. All parse to this.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The six bytes, most significant first, in the low 48 bits.
    public let value: UInt64

    /// The address in the low 48 bits of `value`; higher bits are dropped.
    public init(value: UInt64) {
        self.value = value & 0xFFFF_FFFF_FFFF
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (also with `_` or `-` between the bytes), in either case.
    public init?(_ text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 17 else { return nil }
        let separator = utf8[2]
        guard
            separator == UInt8(ascii: ":") || separator == UInt8(ascii: "_") || separator == UInt8(ascii: "-")
        else { return nil }
        var value: UInt64 = 0
        for byteIndex in 0..<6 {
            let position = byteIndex * 3
            if byteIndex > 0 && utf8[position - 1] != separator { return nil }
            guard let high = Self.hexDigit(utf8[position]), let low = Self.hexDigit(utf8[position + 1]) else {
                return nil
            }
            value = value << 8 | UInt64(high << 4 | low)
        }
        self.value = value
    }

    /// The address of a device object path: `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public init?(devicePath: String) {
        guard let last = devicePath.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        self.init(last.dropFirst(4))
    }

    /// Upper case with colons, as BlueZ's `Address` property: `AA:BB:CC:DD:EE:FF`.
    public var description: String {
        bytes.map { Self.hex($0) }.joined(separator: ":")
    }

    /// The path component BlueZ uses for the device: `dev_AA_BB_CC_DD_EE_FF`.
    public var pathComponent: String {
        "dev_" + bytes.map { Self.hex($0) }.joined(separator: "_")
    }

    /// The six bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * (5 - $0))) }
    }

    /// Numeric order of the six bytes, most significant first.
    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.value < rhs.value
    }

    private static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
