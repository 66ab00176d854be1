/// Builds one JSON object on one line, keys in the order they are added.
///
/// hrm's JSON lines are a contract other tools parse, so the key order and number forms are
/// fixed here rather than left to a general encoder. The line is built as UTF-8 bytes and made a
/// `String` once: `watch` builds one per notification, and each `String` append checks grapheme
/// boundaries (about 90 % of a measurement line's cost when it was built that way).
package struct JSONLine {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    package init() {
        bytes.reserveCapacity(256)
    }

    package init(type: String) {
        self.init()
        add("type", type)
    }

    package mutating func add(_ key: String, _ value: String?) {
        appendKey(key)
        if let value { appendString(value) } else { appendNull() }
    }

    package mutating func add(_ key: String, _ value: Int?) {
        appendKey(key)
        if let value { appendInteger(value) } else { appendNull() }
    }

    /// A number as it is (the shortest form that reads back exactly); null for nil or NaN.
    package mutating func add(_ key: String, _ value: Double?) {
        appendKey(key)
        if let value { bytes.append(contentsOf: Self.number(value).utf8) } else { appendNull() }
    }

    package mutating func add(_ key: String, _ value: Bool) {
        appendKey(key)
        bytes.append(contentsOf: value ? Self.trueLiteral : Self.falseLiteral)
    }

    package mutating func add(_ key: String, _ values: [Int]) {
        appendArray(key, values) { $0.appendInteger($1) }
    }

    package mutating func add(_ key: String, _ values: [Double]) {
        appendArray(key, values) { $0.bytes.append(contentsOf: Self.number($1).utf8) }
    }

    package mutating func add(_ key: String, _ values: [String]) {
        appendArray(key, values) { $0.appendString($1) }
    }

    /// Samples as integers (an ECG frame's microvolts).
    package mutating func add(_ key: String, _ values: [Int32]) {
        appendArray(key, values) { $0.appendInteger(Int($1)) }
    }

    /// Rows of three integers, `[[x,y,z],...]` (an acceleration frame's samples).
    package mutating func add(_ key: String, triples: [(x: Int32, y: Int32, z: Int32)]) {
        appendArray(key, triples) { line, triple in
            line.bytes.append(UInt8(ascii: "["))
            line.appendInteger(Int(triple.x))
            line.bytes.append(UInt8(ascii: ","))
            line.appendInteger(Int(triple.y))
            line.bytes.append(UInt8(ascii: ","))
            line.appendInteger(Int(triple.z))
            line.bytes.append(UInt8(ascii: "]"))
        }
    }

    /// A nested object.
    package mutating func add(_ key: String, object: JSONLine) {
        appendKey(key)
        bytes.append(contentsOf: object.bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// The finished object, without a newline.
    package var line: String {
        var finished = bytes
        finished.append(UInt8(ascii: "}"))
        return String(decoding: finished, as: UTF8.self)
    }

    /// A Double as JSON: the shortest form that reads back exactly (825.1953125), never NaN.
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return String(value)
    }

    private static let nullLiteral = Array("null".utf8)
    private static let trueLiteral = Array("true".utf8)
    private static let falseLiteral = Array("false".utf8)

    private var empty: Bool { bytes.count == 1 }

    private mutating func appendKey(_ key: String) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        appendString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func appendNull() {
        bytes.append(contentsOf: Self.nullLiteral)
    }

    private mutating func appendArray<Element>(
        _ key: String, _ values: [Element], _ appendElement: (inout JSONLine, Element) -> Void
    ) {
        appendKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendElement(&self, value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Decimal digits, most significant first, written through a stack buffer (no String).
    private mutating func appendInteger(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: digits[start...])
        }
    }

    private mutating func appendString(_ value: String) {
        Self.appendString(value, to: &bytes)
    }

    /// `value` as a JSON string, quoted and escaped, onto `bytes`: the one escaping of hrm's JSON
    /// (JSON lines, and `JSONValue.text` for what hrm passes on).
    package static func appendString(_ value: String, to bytes: inout [UInt8]) {
        var value = value
        value.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            defer { bytes.append(UInt8(ascii: "\"")) }
            // Keys and nearly every value need no escaping: copied whole.
            guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            else { return bytes.append(contentsOf: utf8) }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    // Other control characters as \u00XX; every byte of a multi-byte UTF-8
                    // sequence is 0x80 or above and passes through unchanged.
                    bytes.append(contentsOf: Array("\\u00".utf8) + HexPayload.format([byte]).utf8)
                default: bytes.append(byte)
                }
            }
        }
    }
}
