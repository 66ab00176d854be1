/// FIT's CRC-16: CRC-16/ARC (reflected polynomial 0xA001, initial value 0, no final xor),
/// computed a nibble at a time from a 16-entry table, as the FIT protocol describes it. It guards
/// the 14-byte header's first 12 bytes and then the whole file (header and records).
public struct FITCRC: Sendable {
    /// The CRC of each 4-bit value: entry i is the register after shifting i through 4 steps.
    private static let table: [UInt16] = [
        0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
        0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
    ]

    /// The CRC of the bytes so far; 0 before any.
    public private(set) var value: UInt16 = 0

    /// A CRC over no bytes.
    public init() {}

    /// Adds one byte to the CRC.
    public mutating func update(_ byte: UInt8) {
        // Low nibble, then high nibble.
        var crc = value
        crc = (crc >> 4) ^ Self.table[Int(crc & 0xF)] ^ Self.table[Int(byte & 0xF)]
        crc = (crc >> 4) ^ Self.table[Int(crc & 0xF)] ^ Self.table[Int(byte >> 4)]
        value = crc
    }

    /// Adds the bytes in order.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { update(byte) }
    }

    /// The CRC of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc = FITCRC()
        crc.update(bytes)
        return crc.value
    }
}
