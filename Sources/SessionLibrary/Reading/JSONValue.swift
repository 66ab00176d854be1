import Monitor

/// A JSON value, as `hrm hrv` reads the JSON lines `hrm watch --json` wrote.
///
/// HRMCLI does without Foundation (it would triple hrm's resident memory), so this is a small,
/// strict reader of one JSON text (RFC 8259): objects, arrays, numbers, strings, true, false and
/// null, nothing else, nothing after the value but white space. Numbers must be finite as Doubles
/// (`1e400` is refused rather than read as infinity).
package enum JSONValue: Equatable {
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case number(Double)
    case string(String)
    case bool(Bool)
    case null

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let a), .array(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    /// The member `key` of an object (the first, but `parse` refuses duplicates); nil otherwise.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    package var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// Why a text is not JSON, and where (`column` counts bytes from 1).
    package struct SyntaxError: Error, Equatable, CustomStringConvertible {
        package let message: String
        package let column: Int
        package var description: String { "\(message) at column \(column)" }
    }

    /// Deeper nesting is refused: a line of a million `[` must not exhaust the stack.
    package static let depthLimit = 64

    /// The one JSON value `text` holds.
    package static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        var reader = Reader(bytes: Array(text.utf8))
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.atEnd else { throw reader.error("unexpected text after the JSON value") }
        return value
    }

    private struct Reader {
        package let bytes: [UInt8]
        package var position = 0

        package func error(_ message: String) -> SyntaxError {
            SyntaxError(message: message, column: position + 1)
        }

        package var atEnd: Bool { position >= bytes.count }

        package mutating func skipSpace() {
            while !atEnd, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        package mutating func expect(_ literal: String, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
            for byte in literal.utf8 {
                guard !atEnd else { throw error("the line ends inside '\(literal)'") }
                guard bytes[position] == byte else { throw error("unexpected character") }
                position += 1
            }
            return value
        }

        package mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            skipSpace()
            guard !atEnd else { throw error("the line ends where a value should be") }
            switch bytes[position] {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw error("unexpected character")
            }
        }

        package mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth <= JSONValue.depthLimit else { throw error("nested too deeply") }
            position += 1
            var members: [(key: String, value: JSONValue)] = []
            skipSpace()
            if !atEnd, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard !atEnd else { throw error("the line ends inside an object") }
                guard bytes[position] == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
                let keyColumn = position
                let key = try string()
                if members.contains(where: { $0.key == key }) {
                    throw SyntaxError(message: "duplicate key \"\(key)\"", column: keyColumn + 1)
                }
                skipSpace()
                guard !atEnd else { throw error("the line ends inside an object") }
                guard bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
                position += 1
                members.append((key, try value(depth: depth)))
                skipSpace()
                guard !atEnd else { throw error("the line ends inside an object") }
                switch bytes[position] {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return .object(members)
                default: throw error("expected ',' or '}'")
                }
            }
        }

        package mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth <= JSONValue.depthLimit else { throw error("nested too deeply") }
            position += 1
            var elements: [JSONValue] = []
            skipSpace()
            if !atEnd, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            while true {
                elements.append(try value(depth: depth))
                skipSpace()
                guard !atEnd else { throw error("the line ends inside an array") }
                switch bytes[position] {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    return .array(elements)
                default: throw error("expected ',' or ']'")
                }
            }
        }

        /// RFC 8259's grammar exactly: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        package mutating func number() throws(SyntaxError) -> Double {
            let start = position
            func digits(_ reader: inout Reader) -> Int {
                let from = reader.position
                while !reader.atEnd,
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.position])
                {
                    reader.position += 1
                }
                return reader.position - from
            }
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard !atEnd, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else {
                throw error("expected a digit")
            }
            if bytes[position] == UInt8(ascii: "0") {
                position += 1
            } else {
                _ = digits(&self)
            }
            if !atEnd, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits(&self) > 0 else { throw error("expected a digit after '.'") }
            }
            if !atEnd, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
                position += 1
                if !atEnd, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                    position += 1
                }
                guard digits(&self) > 0 else { throw error("expected a digit in the exponent") }
            }
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                throw SyntaxError(message: "the number \(text) is out of range", column: start + 1)
            }
            return value
        }

        package mutating func string() throws(SyntaxError) -> String {
            position += 1
            var utf8: [UInt8] = []
            while true {
                guard !atEnd else { throw error("the line ends inside a string") }
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return String(decoding: utf8, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    position += 1
                    guard !atEnd else { throw error("the line ends inside a string") }
                    let escaped = bytes[position]
                    position += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"): utf8.append(contentsOf: String(try unicodeEscape()).utf8)
                    default:
                        position -= 1
                        throw error("invalid escape")
                    }
                case 0..<0x20:
                    throw error("a control character inside a string")
                default:
                    utf8.append(byte)
                    position += 1
                }
            }
        }

        /// After `\u`: four hex digits, and a second `\uXXXX` for a surrogate pair. A lone
        /// surrogate becomes U+FFFD (the text is only ever compared or shown).
        package mutating func unicodeEscape() throws(SyntaxError) -> Character {
            let first = try hex4()
            guard (0xD800...0xDBFF).contains(first) else {
                return Character(Unicode.Scalar(first) ?? "\u{FFFD}")
            }
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else { return "\u{FFFD}" }
            position += 2
            let second = try hex4()
            guard (0xDC00...0xDFFF).contains(second) else { return "\u{FFFD}" }
            let scalar = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            return Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")
        }

        package mutating func hex4() throws(SyntaxError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard !atEnd else { throw error("the line ends inside a \\u escape") }
                let byte = bytes[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("expected a hex digit in a \\u escape")
                }
                value = value << 4 | UInt32(digit)
                position += 1
            }
            return value
        }
    }
}
