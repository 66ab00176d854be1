// The simulator's own Bluetooth identifiers. They are written for the simulator alone, not shared
// with the client (the BlueZ target): the in-process tests check the client against the simulator,
// so a bug in the client's parsing must not be in the simulator too, where it would go unseen.

/// A device or adapter address, six octets, written in BlueZ's textual forms.
struct SimulatedAddress: Hashable, Sendable, CustomStringConvertible {
    /// The octets in the order they are written, `AA` first.
    let octets: [UInt8]

    /// Reads six two-digit hex octets in either case, separated by `:` (as scenarios write them),
    /// or by `_` or `-` (BlueZ's other spellings), the same separator throughout.
    init?(_ text: String) {
        let separators: [Character] = [":", "_", "-"]
        guard let separator = separators.first(where: { text.contains($0) }) else { return nil }
        let fields = text.split(separator: separator, omittingEmptySubsequences: false)
        guard fields.count == 6 else { return nil }
        var octets: [UInt8] = []
        for field in fields {
            guard field.utf8.count == 2, field.utf8.allSatisfy(isASCIIHexDigit),
                let octet = UInt8(field, radix: 16)
            else { return nil }
            octets.append(octet)
        }
        self.octets = octets
    }

    /// `AA:BB:CC:DD:EE:FF`: the `Address` property.
    var description: String { joined(by: ":") }

    /// `dev_AA_BB_CC_DD_EE_FF`: the last element of the device's object path.
    var pathComponent: String { "dev_" + joined(by: "_") }

    /// `AA-BB-CC-DD-EE-FF`: the `Alias` of a device that advertises no name.
    var dashed: String { joined(by: "-") }

    private func joined(by separator: String) -> String {
        octets.map { hexDigits($0, count: 2).uppercased() }.joined(separator: separator)
    }
}

/// A 128-bit UUID, kept in the form BlueZ sends: lower case with dashes.
struct SimulatedUUID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// `0000180d-0000-1000-8000-00805f9b34fb`.
    let description: String

    /// What follows a 16- or 32-bit assigned number in the Bluetooth Base UUID.
    private static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// A 16-bit assigned number, such as 0x180D.
    init(_ assigned: UInt16) {
        description = "0000" + hexDigits(assigned, count: 4) + Self.baseSuffix
    }

    /// Reads an assigned number (`180d`, `0x180D`; 32-bit `0000180d`) or a full 128-bit UUID,
    /// in either case.
    init?(_ text: String) {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let lower = body.lowercased()
        let characters = Array(lower.utf8)
        switch characters.count {
        case 4, 8:
            guard characters.allSatisfy(isASCIIHexDigit) else { return nil }
            description = String(repeating: "0", count: 8 - characters.count) + lower + Self.baseSuffix
        case 36:
            let dashes: Set<Int> = [8, 13, 18, 23]
            for (index, character) in characters.enumerated() {
                let wanted = dashes.contains(index)
                guard wanted ? character == UInt8(ascii: "-") : isASCIIHexDigit(character) else {
                    return nil
                }
            }
            description = lower
        default:
            return nil
        }
    }

    /// The lower-case hex forms of equal length sort as the numbers do.
    static func < (lhs: SimulatedUUID, rhs: SimulatedUUID) -> Bool {
        lhs.description < rhs.description
    }
}

private func isASCIIHexDigit(_ character: UInt8) -> Bool {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
        UInt8(ascii: "A")...UInt8(ascii: "F"):
        true
    default:
        false
    }
}

/// `value` in lower-case hex, zero-padded on the left to `count` digits.
private func hexDigits(_ value: some BinaryInteger, count: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(count - digits.count, 0)) + digits
}
