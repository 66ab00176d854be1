/// Builds one JSON object on one line, keys in the order they are added.
///
/// hrm's JSON lines are a contract other tools parse, so the key order and number forms are
/// fixed here rather than left to a general encoder.
struct JSONLine {
    private(set) var text = "{"
    private var empty = true

    init() {
        text.reserveCapacity(256)
    }

    init(type: String) {
        self.init()
        add("type", type)
    }

    mutating func add(_ key: String, _ value: String?) {
        appendKey(key)
        if let value { Self.appendString(value, to: &text) } else { text += "null" }
    }

    mutating func add(_ key: String, _ value: Int?) {
        appendKey(key)
        text += value.map { String($0) } ?? "null"
    }

    mutating func add(_ key: String, _ value: Bool) {
        appendKey(key)
        text += value ? "true" : "false"
    }

    mutating func add(_ key: String, _ values: [Int]) {
        appendKey(key)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            text += String(value)
        }
        text += "]"
    }

    mutating func add(_ key: String, _ values: [Double]) {
        appendKey(key)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            text += Self.number(value)
        }
        text += "]"
    }

    mutating func add(_ key: String, _ values: [String]) {
        appendKey(key)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            Self.appendString(value, to: &text)
        }
        text += "]"
    }

    /// The finished object, without a newline.
    var line: String { text + "}" }

    private mutating func appendKey(_ key: String) {
        if !empty { text += "," }
        empty = false
        Self.appendString(key, to: &text)
        text += ":"
    }

    /// A Double as JSON: the shortest form that reads back exactly (825.1953125), never NaN.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return String(value)
    }

    static func appendString(_ value: String, to text: inout String) {
        // Keys and most values need no escaping: append them whole.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) {
            text += "\""
            text += value
            text += "\""
            return
        }
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = HexPayload.format([UInt8(scalar.value)])
                text += "\\u00" + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
