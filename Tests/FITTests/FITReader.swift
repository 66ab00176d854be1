/// A minimal FIT reader for the tests: the header, then every message with its fields' raw bytes,
/// following definition messages (normal headers only, little-endian only: what the encoder
/// writes). It checks nothing the independent readers check better (Tests/FITCheck); it lets the
/// unit tests look at single fields.
struct FITReader {
    struct Message {
        let global: UInt16
        let local: UInt8
        /// Field number and its bytes, in the order written.
        let fields: [(number: UInt8, bytes: [UInt8])]

        func bytes(_ number: UInt8) -> [UInt8]? { fields.first { $0.number == number }?.bytes }

        func uint(_ number: UInt8) -> UInt64? {
            bytes(number).map { $0.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        }

        /// A uint16 array field's values.
        func uint16s(_ number: UInt8) -> [UInt16]? {
            bytes(number).map { bytes in
                stride(from: 0, to: bytes.count - 1, by: 2).map {
                    UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8
                }
            }
        }
    }

    enum Failure: Error { case truncated(at: Int), undefinedLocal(UInt8, at: Int), notLittleEndian }

    let headerSize: Int
    let dataSize: Int
    /// Definition messages met, in order (local, global).
    private(set) var definitions: [(local: UInt8, global: UInt16)] = []
    private(set) var messages: [Message] = []

    init(_ file: [UInt8]) throws {
        guard file.count >= 14 else { throw Failure.truncated(at: 0) }
        headerSize = Int(file[0])
        dataSize = Int(file[4]) | Int(file[5]) << 8 | Int(file[6]) << 16 | Int(file[7]) << 24
        let end = headerSize + dataSize
        guard file.count >= end + 2 else { throw Failure.truncated(at: file.count) }
        var layouts: [UInt8: (global: UInt16, fields: [(UInt8, Int)])] = [:]
        var offset = headerSize
        func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard offset + count <= end else { throw Failure.truncated(at: offset) }
            defer { offset += count }
            return file[offset..<(offset + count)]
        }
        while offset < end {
            let header = try take(1).first ?? 0
            let local = header & 0x0F
            if header & 0x40 != 0 {
                let fixed = Array(try take(5))
                guard fixed[1] == 0 else { throw Failure.notLittleEndian }
                let global = UInt16(fixed[2]) | UInt16(fixed[3]) << 8
                var fields: [(UInt8, Int)] = []
                for _ in 0..<fixed[4] {
                    let field = Array(try take(3))
                    fields.append((field[0], Int(field[1])))
                }
                layouts[local] = (global, fields)
                definitions.append((local, global))
            } else {
                guard let layout = layouts[local] else { throw Failure.undefinedLocal(local, at: offset - 1) }
                var fields: [(number: UInt8, bytes: [UInt8])] = []
                for (number, size) in layout.fields { fields.append((number, Array(try take(size)))) }
                messages.append(Message(global: layout.global, local: local, fields: fields))
            }
        }
    }

    func messages(_ global: UInt16) -> [Message] { messages.filter { $0.global == global } }
}
