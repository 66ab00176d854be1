import CTOMLShims
import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one place that talks to toml++ (through `CTOMLShims`): TOML text in, plain `ConfigEntry`
/// values out with the line of each key, or the syntax error with its line and column.
enum TOMLDocument {
    struct SyntaxError: Error, Sendable, Equatable {
        let line: Int
        let column: Int
        let message: String
    }

    static func parse(_ text: String) throws(SyntaxError) -> [ConfigEntry] {
        let parsedOrNil = text.utf8CString.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { hrm_toml_parse($0, buffer.count - 1) }
        }
        guard var parsed = parsedOrNil else { throw SyntaxError(line: 0, column: 0, message: "cannot parse") }
        defer { hrm_toml_free(&parsed) }
        guard let data = parsed.data else {
            let message = parsed.message.map { String(cString: $0) } ?? "not TOML"
            throw SyntaxError(line: Int(parsed.line), column: Int(parsed.column), message: message)
        }
        var reader = Reader(bytes: UnsafeBufferPointer(start: data, count: parsed.length))
        guard case .table(let entries)? = reader.value() else {
            throw SyntaxError(line: 0, column: 0, message: "toml++ gave something unreadable")
        }
        return entries
    }

    /// Reads TOMLShims.cpp's encoding; nil on anything short or unknown (never traps).
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func byte() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func integer(_ size: Int) -> UInt64? {
            guard bytes.count - index >= size else { return nil }
            var value: UInt64 = 0
            for shift in 0..<size { value |= UInt64(bytes[index + shift]) << (8 * shift) }
            index += size
            return value
        }

        mutating func string() -> String? {
            guard let length = integer(4).map(Int.init), bytes.count - index >= length else { return nil }
            defer { index += length }
            return String(decoding: bytes[index..<(index + length)], as: UTF8.self)
        }

        mutating func value() -> ConfigValue? {
            switch byte() {
            case UInt8(ascii: "t"):
                guard let count = integer(4) else { return nil }
                var entries: [ConfigEntry] = []
                for _ in 0..<count {
                    guard let line = integer(4), let key = string(), let value = value() else { return nil }
                    entries.append(ConfigEntry(key: key, value: value, line: line > 0 ? Int(line) : nil))
                }
                return .table(entries)
            case UInt8(ascii: "a"):
                guard let count = integer(4) else { return nil }
                var values: [ConfigValue] = []
                for _ in 0..<count {
                    guard let value = value() else { return nil }
                    values.append(value)
                }
                return .array(values)
            case UInt8(ascii: "s"): return string().map { .string($0) }
            case UInt8(ascii: "i"): return integer(8).map { .integer(Int(Int64(bitPattern: $0))) }
            case UInt8(ascii: "f"): return integer(8).map { .float(Double(bitPattern: $0)) }
            case UInt8(ascii: "b"): return byte().map { .boolean($0 != 0) }
            case UInt8(ascii: "d"): return .dateOrTime
            default: return nil
            }
        }
    }
}
