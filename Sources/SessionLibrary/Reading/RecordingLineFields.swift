import Monitor

/// The members of one line of a recording that reading it needs, from the line read in place
/// (`FlatJSONLine`, the shape hrm writes) or, for any other line, from `JSONValue`: the same
/// answers either way, so a line hrm did not write the way it writes reads as it always did.
struct RecordingLineFields {
    private var flat = FlatJSONLine()
    /// The line as `JSONValue` read it, when `flat` did not.
    private var value: JSONValue? = nil
    private var isFlat = false

    /// A reader for line after line (its storage reused).
    init() {}

    /// Reads the line in `bytes` in place of the last one: false when it is not JSON at all
    /// (`JSONValue` refuses it). `bytes` must outlive the reading of the members.
    mutating func read(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if flat.scan(bytes) {
            isFlat = true
            value = nil
            return true
        }
        isFlat = false
        value = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self))
        return value != nil
    }

    /// `type` when it is a string (nil for a value that is not an object).
    var type: String? { string("type") }

    func string(_ key: StaticString) -> String? {
        isFlat ? flat.string(key) : value?[key.description]?.string
    }

    func number(_ key: StaticString) -> Double? {
        if isFlat { return flat.number(key) }
        if case .number(let number)? = value?[key.description] { return number }
        return nil
    }

    /// `key`'s value when it is a whole number that fits an Int64, read exactly from its digits
    /// (a sensor's nanoseconds, 7e17, are past a Double's exact integers) when the line reads in
    /// place; from the Double otherwise.
    func integer(_ key: StaticString) -> Int64? {
        if isFlat { return flat.integer(key) }
        guard case .number(let number)? = value?[key.description], number == number.rounded(),
            abs(number) < 9.2e18
        else { return nil }
        return Int64(number)
    }

    /// A time member (`time`, `start`) as milliseconds since the epoch.
    func milliseconds(_ key: StaticString) -> Int64? {
        if isFlat { return flat.stringBytes(key).flatMap(RecordedSession.milliseconds(bytes:)) }
        return value?[key.description]?.string.flatMap(RecordedSession.milliseconds)
    }

    /// `device`, the same String for every line that names the same strap (one allocation per
    /// strap, not per line).
    func device(_ names: inout DeviceNames) -> String? {
        if isFlat { return flat.stringBytes("device").map { names.name($0) } }
        return value?["device"]?.string
    }

    /// A measurement's `hex` as bytes: plain hex digits decoded in place, anything else by
    /// `HexPayload` (as always); nil when there is none or it does not read.
    func hexPayload() -> [UInt8]? {
        if isFlat, let bytes = flat.plainHex("hex") { return bytes }
        return string("hex").flatMap { try? HexPayload.parse($0) }
    }
}

/// The strap addresses a recording names, each made a String once.
struct DeviceNames {
    private var last: (bytes: [UInt8], name: String)? = nil
    private var known: [[UInt8]: String] = [:]

    mutating func name(_ bytes: UnsafeRawBufferPointer) -> String {
        if let last, last.bytes.elementsEqual(bytes) { return last.name }
        let key = Array(bytes)
        let name = known[key] ?? String(decoding: bytes, as: UTF8.self)
        known[key] = name
        last = (key, name)
        return name
    }
}
