#if canImport(Glibc)
    import Glibc
#endif

/// A line of a recording read in place: the one shape hrm writes (a flat JSON object, compact,
/// its strings without escapes), checked as strictly as `JSONValue.parse` checks it, without
/// building a value: the members' values are ranges of the line's bytes.
///
/// `scan` returns nil for anything outside that shape (white space, an escape, a nested object,
/// an exponent, a duplicate key, anything not JSON): the caller then reads the line with
/// `JSONValue`, which accepts or refuses it. So a line reads the same either way, and the common
/// one ten times faster.
package struct FlatJSONLine {
    /// A member's value, as the line holds it.
    package enum Kind: Equatable {
        /// The bytes between the quotes (no escapes, no control characters).
        case string
        /// A number by RFC 8259's grammar, without an exponent.
        case number
        case literal
        case array
    }

    package struct Member {
        package let key: Range<Int>
        package let value: Range<Int>
        package let kind: Kind
    }

    /// The members in order; keys are unique.
    package private(set) var members: [Member] = []
    private var base = UnsafeRawBufferPointer(start: nil, count: 0)

    /// A reader to `scan` line after line with, its storage reused.
    package init() {
        members.reserveCapacity(16)
    }

    /// The line in `bytes` (without its newline), or nil when it is not of the shape read here.
    /// `bytes` must outlive the result.
    package static func scan(_ bytes: UnsafeRawBufferPointer) -> FlatJSONLine? {
        var line = FlatJSONLine()
        return line.scan(bytes) ? line : nil
    }

    /// Reads the line in `bytes` (without its newline) in place of the last one: false when it is
    /// not of the shape read here (the members are then meaningless). `bytes` must outlive the
    /// reading of the members.
    package mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Bool {
        members.removeAll(keepingCapacity: true)
        base = bytes
        guard let start = bytes.baseAddress else { return false }
        return read(start)
    }

    /// The value of `key` (ASCII), nil when the line has no such member.
    package func member(_ key: StaticString) -> Member? {
        guard let start = base.baseAddress else { return nil }
        let count = key.utf8CodeUnitCount
        for member in members where member.key.count == count {
            if memcmp(start + member.key.lowerBound, key.utf8Start, count) == 0 { return member }
        }
        return nil
    }

    /// The bytes of `key`'s value when it is a string.
    package func stringBytes(_ key: StaticString) -> UnsafeRawBufferPointer? {
        guard let member = member(key), member.kind == .string else { return nil }
        return UnsafeRawBufferPointer(rebasing: base[member.value])
    }

    /// `key`'s value when it is a string.
    package func string(_ key: StaticString) -> String? {
        stringBytes(key).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `key`'s value when it is a number (as `JSONValue` reads it: `Double` of its text).
    package func number(_ key: StaticString) -> Double? {
        guard let member = member(key), member.kind == .number else { return nil }
        let bytes = base[member.value]
        // Up to 15 digits without a point are exact in a Double: no text to parse.
        if bytes.count <= 15, !bytes.contains(UInt8(ascii: ".")) {
            var value: Int64 = 0
            var negative = false
            for byte in bytes {
                if byte == UInt8(ascii: "-") {
                    negative = true
                } else {
                    value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                }
            }
            return Double(negative ? -value : value)
        }
        return Double(String(decoding: bytes, as: UTF8.self))
    }

    /// `key`'s value when it is a number without a fraction that fits an Int64, read exactly from
    /// its digits; nil otherwise.
    package func integer(_ key: StaticString) -> Int64? {
        guard let member = member(key), member.kind == .number else { return nil }
        var value: Int64 = 0
        var negative = false
        for byte in base[member.value] {
            if byte == UInt8(ascii: "-") {
                negative = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return negative ? -value : value
    }

    /// Whether the line's `key` is `null`.
    package func isNull(_ key: StaticString) -> Bool {
        guard let member = member(key), member.kind == .literal else { return false }
        return member.value.count == 4 && base[member.value.lowerBound] == UInt8(ascii: "n")
    }

    /// Whether the line's `key` is the string `text`.
    package func string(_ key: StaticString, is text: StaticString) -> Bool {
        guard let member = member(key), member.kind == .string, member.value.count == text.utf8CodeUnitCount,
            let start = base.baseAddress
        else { return false }
        return memcmp(start + member.value.lowerBound, text.utf8Start, member.value.count) == 0
    }

    /// `key`'s value as bytes when it is a string of hex digits in pairs and nothing else (the
    /// form hrm writes a payload in, which `HexPayload.parse` reads the same); nil otherwise.
    package func plainHex(_ key: StaticString) -> [UInt8]? {
        guard let text = stringBytes(key), !text.isEmpty, text.count % 2 == 0 else { return nil }
        func digit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var index = 0
        while index < text.count {
            guard let high = digit(text[index]), let low = digit(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    // MARK: Reading

    private static let quote = UInt8(ascii: "\"")

    private mutating func read(_ start: UnsafeRawPointer) -> Bool {
        let count = base.count
        guard count >= 2, base[0] == UInt8(ascii: "{"), base[count - 1] == UInt8(ascii: "}") else {
            return false
        }
        var position = 1
        if count == 2 { return true }
        // A cheap fingerprint per key (length and two bytes): only keys that share one are compared.
        var seen: UInt64 = 0
        while true {
            guard let key = string(at: &position) else { return false }
            guard position < count, base[position] == UInt8(ascii: ":") else { return false }
            position += 1
            guard let (value, kind) = value(at: &position) else { return false }
            let bit: UInt64 =
                1
                << ((UInt64(key.count) &* 31 &+ UInt64(key.isEmpty ? 0 : base[key.lowerBound])
                    &+ UInt64(key.isEmpty ? 0 : base[key.upperBound - 1]) &* 7) & 63)
            if seen & bit != 0, isDuplicate(key, start) { return false }
            seen |= bit
            members.append(Member(key: key, value: value, kind: kind))
            guard position < count else { return false }
            switch base[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): return position == count - 1
            default: return false
            }
        }
    }

    private func isDuplicate(_ key: Range<Int>, _ start: UnsafeRawPointer) -> Bool {
        members.contains { member in
            member.key.count == key.count
                && memcmp(start + member.key.lowerBound, start + key.lowerBound, key.count) == 0
        }
    }

    /// A string at `position` (its opening quote): the range inside the quotes. Nil for an escape
    /// or a control character (`JSONValue` reads the one and refuses the other).
    private func string(at position: inout Int) -> Range<Int>? {
        guard position < base.count, base[position] == Self.quote else { return nil }
        let start = position + 1
        var index = start
        while index < base.count {
            let byte = base[index]
            if byte == Self.quote {
                position = index + 1
                return start..<index
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            index += 1
        }
        return nil
    }

    private func value(at position: inout Int) -> (Range<Int>, Kind)? {
        guard position < base.count else { return nil }
        let from = position
        switch base[position] {
        case Self.quote:
            guard let range = string(at: &position) else { return nil }
            return (range, .string)
        case UInt8(ascii: "["):
            position += 1
            if position < base.count, base[position] == UInt8(ascii: "]") {
                position += 1
                return (from..<position, .array)
            }
            while true {
                // Scalars only: a nested array or object goes to `JSONValue`.
                guard position < base.count, base[position] != UInt8(ascii: "["),
                    base[position] != UInt8(ascii: "{"), value(at: &position) != nil, position < base.count
                else { return nil }
                switch base[position] {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    return (from..<position, .array)
                default: return nil
                }
            }
        case UInt8(ascii: "t"): return literal("true", at: &position)
        case UInt8(ascii: "f"): return literal("false", at: &position)
        case UInt8(ascii: "n"): return literal("null", at: &position)
        default:
            guard number(at: &position) else { return nil }
            return (from..<position, .number)
        }
    }

    private func literal(_ word: StaticString, at position: inout Int) -> (Range<Int>, Kind)? {
        let length = word.utf8CodeUnitCount
        guard position + length <= base.count, let start = base.baseAddress,
            memcmp(start + position, word.utf8Start, length) == 0
        else {
            return nil
        }
        let from = position
        position += length
        return (from..<position, .literal)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)?`, at most 300 bytes (always finite as a Double); an
    /// exponent goes to `JSONValue`.
    private func number(at position: inout Int) -> Bool {
        let from = position
        func isDigit(_ index: Int) -> Bool {
            index < base.count && base[index] >= UInt8(ascii: "0") && base[index] <= UInt8(ascii: "9")
        }
        if position < base.count, base[position] == UInt8(ascii: "-") { position += 1 }
        guard isDigit(position) else { return false }
        if base[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while isDigit(position) { position += 1 }
        }
        if position < base.count, base[position] == UInt8(ascii: ".") {
            position += 1
            guard isDigit(position) else { return false }
            while isDigit(position) { position += 1 }
        }
        if position < base.count, base[position] == UInt8(ascii: "e") || base[position] == UInt8(ascii: "E") {
            return false
        }
        return position - from <= 300
    }
}
