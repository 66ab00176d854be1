import Monitor

/// The members of one line of a recording that reading it needs, from the line read in place
/// (`FlatJSONLine`, the shape hrm writes) or, for any other line, from `JSONValue`: the same
/// answers either way, so a line hrm did not write the way it writes reads as it always did.
struct RecordingLineFields {
    private enum Source {
        case flat(FlatJSONLine, UnsafeRawBufferPointer)
        case value(JSONValue)
    }

    private let source: Source

    /// The line's members, or nil when it is not JSON at all (`JSONValue` refuses it).
    init?(_ bytes: UnsafeRawBufferPointer) {
        if let flat = FlatJSONLine.scan(bytes) {
            source = .flat(flat, bytes)
        } else if let value = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)) {
            source = .value(value)
        } else {
            return nil
        }
    }

    /// `type` when it is a string (nil for a value that is not an object).
    var type: String? { string("type") }

    func string(_ key: StaticString) -> String? {
        switch source {
        case .flat(let line, _): line.string(key)
        case .value(let value): value[key.description]?.string
        }
    }

    func number(_ key: StaticString) -> Double? {
        switch source {
        case .flat(let line, _): return line.number(key)
        case .value(let value):
            if case .number(let number)? = value[key.description] { return number }
            return nil
        }
    }

    /// A time member (`time`, `start`) as milliseconds since the epoch.
    func milliseconds(_ key: StaticString) -> Int64? {
        switch source {
        case .flat(let line, _): line.stringBytes(key).flatMap(RecordedSession.milliseconds(bytes:))
        case .value(let value): value[key.description]?.string.flatMap(RecordedSession.milliseconds)
        }
    }

    /// `device`, the same String for every line that names the same strap (one allocation per
    /// strap, not per line).
    func device(_ names: inout DeviceNames) -> String? {
        switch source {
        case .flat(let line, _): line.stringBytes("device").map { names.name($0) }
        case .value(let value): value["device"]?.string
        }
    }

    /// A measurement's `hex` as bytes: plain hex digits decoded in place, anything else by
    /// `HexPayload` (as always); nil when there is none or it does not read.
    func hexPayload() -> [UInt8]? {
        switch source {
        case .flat(let line, _):
            if let bytes = line.plainHex("hex") { return bytes }
            return line.string("hex").flatMap { try? HexPayload.parse($0) }
        case .value(let value):
            return value["hex"]?.string.flatMap { try? HexPayload.parse($0) }
        }
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
