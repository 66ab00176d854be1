/// One field of a data message: its number in the profile's message and its value in the field's
/// base type.
struct FITField: Sendable {
    enum Value: Sendable {
        case enumeration(UInt8)
        case uint8(UInt8)
        case uint16(UInt16)
        case uint32(UInt32)
        /// uint32z: 0 rather than 0xFFFFFFFF is "no value" (serial numbers).
        case uint32z(UInt32)
        /// A fixed-size array of uint16: its size is part of the definition, one byte, so at most
        /// 127 values (the encoder writes 5).
        case uint16Array([UInt16])
    }

    let number: UInt8
    let value: Value

    /// The base type byte of the definition message: bit 7 set for types of more than one byte
    /// (byte order matters), the type number in the low 5 bits.
    var baseType: UInt8 {
        switch value {
        case .enumeration: 0x00
        case .uint8: 0x02
        case .uint16, .uint16Array: 0x84
        case .uint32: 0x86
        case .uint32z: 0x8C
        }
    }

    /// Bytes in a data message.
    var size: Int {
        switch value {
        case .enumeration, .uint8: 1
        case .uint16: 2
        case .uint32, .uint32z: 4
        case .uint16Array(let values): 2 * values.count
        }
    }
}

/// A data message: the profile's global message number, the local message type that carries it
/// in this file (0 to 15) and its fields in the order written.
struct FITMessage: Sendable {
    let global: UInt16
    let local: UInt8
    let fields: [FITField]
}

/// Writes FIT records (definition and data messages, normal headers, little-endian) and, at the
/// end, the file: the 14-byte header, the records and the CRC.
struct FITWriter: Sendable {
    /// One field of a definition message: number, size in bytes, base type.
    private struct FieldDefinition: Equatable {
        let number: UInt8
        let size: UInt8
        let baseType: UInt8
    }

    private struct Definition: Equatable {
        let global: UInt16
        let fields: [FieldDefinition]
    }

    /// FIT protocol 2.0: (major << 4) | minor.
    static let protocolVersion: UInt8 = 0x20
    /// The profile the fields were checked against, as the FIT SDK writes it: major * 1000 + minor
    /// (21.218).
    static let profileVersion: UInt16 = 21_218

    /// The records written so far (no header, no CRC).
    private(set) var records: [UInt8] = []
    /// The definition each local message type carries now.
    private var definitions: [Definition?] = Array(repeating: nil, count: 16)

    init(reservingCapacity capacity: Int = 0) {
        records.reserveCapacity(capacity)
    }

    /// Writes `message`, preceded by a definition message when its local type has none yet or
    /// carries another layout (another global message, other fields or sizes).
    mutating func write(_ message: FITMessage) {
        let local = Int(message.local & 0x0F)
        let definition = Self.definition(of: message)
        if definitions[local] != definition {
            writeDefinition(definition, local: UInt8(local))
            definitions[local] = definition
        }
        records.append(UInt8(local))  // normal header, data message
        for field in message.fields { append(field.value) }
    }

    /// The whole file: header (with its CRC), records, and the CRC of both.
    func file() -> [UInt8] {
        var file = Self.header(dataSize: records.count)
        file.reserveCapacity(file.count + records.count + 2)
        file += records
        let crc = FITCRC.checksum(file)
        file.append(UInt8(truncatingIfNeeded: crc))
        file.append(UInt8(truncatingIfNeeded: crc >> 8))
        return file
    }

    /// The 14-byte header: size, protocol and profile versions, the records' size, ".FIT", and the
    /// CRC of the 12 bytes before it. Records beyond 4 GiB cannot be described; no activity of
    /// hrm's comes near (a day at 1 Hz is about 0.2 MB).
    static func header(dataSize: Int) -> [UInt8] {
        var header: [UInt8] = [14, protocolVersion]
        appendLittleEndian(UInt64(profileVersion), bytes: 2, to: &header)
        appendLittleEndian(UInt64(UInt32(clamping: dataSize)), bytes: 4, to: &header)
        header += Array(".FIT".utf8)
        let crc = FITCRC.checksum(header)
        appendLittleEndian(UInt64(crc), bytes: 2, to: &header)
        return header
    }

    private static func definition(of message: FITMessage) -> Definition {
        Definition(
            global: message.global,
            fields: message.fields.map {
                FieldDefinition(number: $0.number, size: UInt8(clamping: $0.size), baseType: $0.baseType)
            })
    }

    private mutating func writeDefinition(_ definition: Definition, local: UInt8) {
        records.append(0x40 | local)  // normal header, definition message
        records.append(0)  // reserved
        records.append(0)  // architecture: little-endian
        Self.appendLittleEndian(UInt64(definition.global), bytes: 2, to: &records)
        records.append(UInt8(clamping: definition.fields.count))
        for field in definition.fields {
            records += [field.number, field.size, field.baseType]
        }
    }

    private mutating func append(_ value: FITField.Value) {
        switch value {
        case .enumeration(let byte), .uint8(let byte): records.append(byte)
        case .uint16(let number): Self.appendLittleEndian(UInt64(number), bytes: 2, to: &records)
        case .uint32(let number), .uint32z(let number):
            Self.appendLittleEndian(UInt64(number), bytes: 4, to: &records)
        case .uint16Array(let numbers):
            for number in numbers { Self.appendLittleEndian(UInt64(number), bytes: 2, to: &records) }
        }
    }

    private static func appendLittleEndian(_ value: UInt64, bytes: Int, to buffer: inout [UInt8]) {
        for index in 0..<bytes { buffer.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
