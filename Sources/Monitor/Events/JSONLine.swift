/// Builds one JSON object on one line, keys in the order they are added.
///
/// hrm's JSON lines are a contract other tools parse, so the key order and number forms are
/// fixed here rather than left to a general encoder. `watch` builds one line per notification, so
/// the line is built as UTF-8 bytes in a buffer of its own and made a `String` once: a `String`
/// append checks grapheme boundaries (about 90 % of a measurement line's cost when it was built
/// that way), and an `[UInt8]` append checks uniqueness and capacity for every byte (half of what
/// was left, #29). Here each field reserves its room once and writes its bytes. A `Key` is mostly
/// one of hrm's literals, copied as it is with no check for what to escape; a key made at run time
/// is escaped as any string is.
///
/// Not copyable: the buffer has one owner, freed when the line goes.
package struct JSONLine: ~Copyable {
    /// A key: one of hrm's literals (`"bpm"`), copied as it is, or a name made at run time
    /// (`JSONLine.Key("zone\(n)_min")`), escaped as any string is.
    package struct Key: ExpressibleByStringLiteral {
        fileprivate enum Name {
            case literal(StaticString)
            case piece(JSONLiteral)
            case computed(String)
        }
        fileprivate let name: Name

        package init(stringLiteral literal: StaticString) { name = .literal(literal) }
        package init(_ computed: String) { name = .computed(computed) }
        /// A key from the measurement line's literal (`.bpm`; JSONLiteral says why).
        package init(_ piece: JSONLiteral) { name = .piece(piece) }
    }

    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Whether `base` is this line's to free: false while it is a caller's scratch (`withLine`).
    private var owned: Bool

    package init() {
        capacity = 256
        base = .allocate(capacity: capacity)
        owned = true
        base[0] = UInt8(ascii: "{")
        count = 1
    }

    /// A line in `scratch` (the caller's, which must outlive the line), moved to memory of its
    /// own if it outgrows it, whose `type` is one of hrm's literals.
    init(scratch: UnsafeMutableBufferPointer<UInt8>, literalType type: JSONLiteral) {
        if let start = scratch.baseAddress, scratch.count >= 2 {
            (base, capacity, owned) = (start, scratch.count, false)
        } else {
            (base, capacity, owned) = (.allocate(capacity: 256), 256, true)
        }
        base[0] = UInt8(ascii: "{")
        count = 1
        add(.type, literal: type)
    }

    package init(type: String) {
        self.init()
        add("type", type)
    }

    /// A line whose `type` is a piece of the measurement line's literal (`.measurement`), copied
    /// with no check for what to escape.
    package init(literalType type: JSONLiteral) {
        self.init()
        add(.type, literal: type)
    }

    deinit {
        if owned { base.deallocate() }
    }

    @inline(__always)
    package mutating func add(_ key: Key, _ value: String?) {
        appendKey(key)
        if let value { appendString(value) } else { appendNull() }
    }

    /// A string value that is one of hrm's literals (an event's type, an enum's identifier):
    /// copied as it is, with no check for what to escape.
    @inline(__always)
    package mutating func add(_ key: Key, literal value: StaticString) {
        appendKey(key)
        value.withUTF8Buffer { appendQuoted($0) }
    }

    /// A string value that is a piece of the measurement line's literal (`.detected`).
    @inline(__always)
    package mutating func add(_ key: Key, literal value: JSONLiteral) {
        appendKey(key)
        value.withBytes { appendQuoted($0) }
    }

    @inline(__always)
    package mutating func add(_ key: Key, _ value: Int?) {
        appendKey(key)
        if let value { appendInteger(value) } else { appendNull() }
    }

    /// A number as it is (the shortest form that reads back exactly); null for nil or NaN.
    package mutating func add(_ key: Key, _ value: Double?) {
        appendKey(key)
        if let value { appendNumber(value) } else { appendNull() }
    }

    package mutating func add(_ key: Key, _ value: Bool) {
        appendKey(key)
        put(value ? "true" : "false")
    }

    package mutating func add(_ key: Key, _ values: [Int]) {
        appendArray(key, values) { $0.appendInteger($1) }
    }

    package mutating func add(_ key: Key, _ values: [Double]) {
        appendArray(key, values) { $0.appendNumber($1) }
    }

    package mutating func add(_ key: Key, _ values: [String]) {
        appendArray(key, values) { $0.appendString($1) }
    }

    /// The integers `value` makes of each of `values`, as an array: no array made in between
    /// (a measurement's RR intervals, for every notification).
    package mutating func add<Values: Sequence>(
        _ key: Key, integersOf values: Values, _ value: (Values.Element) -> Int
    ) {
        appendArray(key, values) { $0.appendInteger(value($1)) }
    }

    /// The numbers `value` makes of each of `values`, as an array: no array made in between.
    package mutating func add<Values: Sequence>(
        _ key: Key, numbersOf values: Values, _ value: (Values.Element) -> Double
    ) {
        appendArray(key, values) { $0.appendNumber(value($1)) }
    }

    /// Samples as integers (an ECG frame's microvolts).
    package mutating func add(_ key: Key, _ values: [Int32]) {
        appendArray(key, values) { $0.appendInteger(Int($1)) }
    }

    /// Rows of three integers, `[[x,y,z],...]` (an acceleration frame's samples).
    package mutating func add(_ key: Key, triples: [(x: Int32, y: Int32, z: Int32)]) {
        appendArray(key, triples) { line, triple in
            line.put(UInt8(ascii: "["))
            line.appendInteger(Int(triple.x))
            line.put(UInt8(ascii: ","))
            line.appendInteger(Int(triple.y))
            line.put(UInt8(ascii: ","))
            line.appendInteger(Int(triple.z))
            line.put(UInt8(ascii: "]"))
        }
    }

    /// A nested object.
    package mutating func add(_ key: Key, object: borrowing JSONLine) {
        appendKey(key)
        put(UnsafeBufferPointer(start: object.base, count: object.count))
        put(UInt8(ascii: "}"))
    }

    /// A time as UTC to the millisecond (`Timestamp`'s form), written without a `String`.
    @inline(__always)
    package mutating func add(_ key: Key, _ time: Timestamp) {
        var last = Timestamp.LastSecond()
        add(key, time, reusing: &last)
    }

    /// A time as `add(_:_:)` writes it, its date and time of day copied from `last` when it is
    /// the same second (a writer of many lines keeps one).
    @inline(__always)
    package mutating func add(_ key: Key, _ time: Timestamp, reusing last: inout Timestamp.LastSecond) {
        appendKey(key)
        reserve(Timestamp.width + 2)
        base[count] = UInt8(ascii: "\"")
        count += 1
        count += time.write(
            into: UnsafeMutableBufferPointer(start: base + count, count: Timestamp.width), reusing: &last)
        base[count] = UInt8(ascii: "\"")
        count += 1
    }

    /// The finished object, without a newline.
    package var line: String { finished(newline: false) }

    /// The finished object, with a newline after it if asked: the bytes copied once, into the
    /// `String`.
    package func finished(newline: Bool) -> String {
        String(unsafeUninitializedCapacity: count + 2) { buffer in
            guard let start = buffer.baseAddress else { return 0 }
            start.update(from: base, count: count)
            var end = count
            buffer[end] = UInt8(ascii: "}")
            end += 1
            if newline {
                buffer[end] = UInt8(ascii: "\n")
                end += 1
            }
            return end
        }
    }

    /// The finished object's bytes, with a newline after it if asked, lent to `body`: no `String`
    /// made (stdout's queue copies them). The line can still be added to afterwards.
    package mutating func withFinishedBytes<Result>(
        newline: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        reserve(2)
        base[count] = UInt8(ascii: "}")
        if newline { base[count + 1] = UInt8(ascii: "\n") }
        return body(UnsafeBufferPointer(start: base, count: count + (newline ? 2 : 1)))
    }

    /// A Double as JSON: the shortest form that reads back exactly (825.1953125), never NaN.
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return String(value)
    }

    private var empty: Bool { count == 1 }

    /// Room for `extra` more bytes. Only the test is inlined: the growth, which a line of a
    /// notification never takes, is a call, so that the bytes a line does write lie together
    /// (inlined at each of a measurement line's twenty-odd writes, it was a third of their code,
    /// jumped over every time: #29).
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toHold: extra) }
    }

    /// Moves the line to memory of its own with room for `extra` more bytes.
    @inline(never)
    private mutating func grow(toHold extra: Int) {
        let grown = max(capacity * 2, count + extra)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.moveInitialize(from: base, count: count)
        if owned { base.deallocate() }
        base = moved
        capacity = grown
        owned = true
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).update(from: start, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    private mutating func put(_ literal: StaticString) {
        literal.withUTF8Buffer { put($0) }
    }

    @inline(__always)
    private mutating func appendKey(_ key: Key) {
        switch key.name {
        case .literal(let literal):
            literal.withUTF8Buffer { appendKey(named: $0) }
        case .piece(let piece):
            piece.withBytes { appendKey(named: $0) }
        case .computed(let name):
            if !empty { put(UInt8(ascii: ",")) }
            appendString(name)
            put(UInt8(ascii: ":"))
        }
    }

    /// `,"name":` (no comma first), `name` copied as it is.
    @inline(__always)
    private mutating func appendKey(named name: UnsafeBufferPointer<UInt8>) {
        reserve(name.count + 4)
        if !empty {
            base[count] = UInt8(ascii: ",")
            count += 1
        }
        base[count] = UInt8(ascii: "\"")
        count += 1
        if let start = name.baseAddress { (base + count).update(from: start, count: name.count) }
        count += name.count
        base[count] = UInt8(ascii: "\"")
        base[count + 1] = UInt8(ascii: ":")
        count += 2
    }

    @inline(__always)
    private mutating func appendNull() {
        JSONLiteral.null.withBytes { put($0) }
    }

    private mutating func appendNumber(_ value: Double) {
        var text = Self.number(value)
        text.withUTF8 { put($0) }
    }

    private mutating func appendArray<Values: Sequence>(
        _ key: Key, _ values: Values, _ appendElement: (inout JSONLine, Values.Element) -> Void
    ) {
        appendKey(key)
        put(UInt8(ascii: "["))
        var first = true
        for value in values {
            if !first { put(UInt8(ascii: ",")) }
            first = false
            appendElement(&self, value)
        }
        put(UInt8(ascii: "]"))
    }

    /// Decimal digits, most significant first, written in place.
    private mutating func appendInteger(_ value: Int) {
        reserve(21)
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var magnitude = value.magnitude
        var digits = 0
        var rest = magnitude
        repeat {
            digits += 1
            rest /= 10
        } while rest > 0
        var index = count + digits
        repeat {
            index -= 1
            base[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        count += digits
    }

    /// `utf8` in quotes, as it is: bytes known to need no escaping.
    @inline(__always)
    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count + 2)
        base[count] = UInt8(ascii: "\"")
        count += 1
        put(utf8)
        base[count] = UInt8(ascii: "\"")
        count += 1
    }

    private mutating func appendString(_ value: String) {
        var text = value
        let plain = text.withUTF8 { utf8 in
            // Keys and nearly every value need no escaping: copied whole.
            guard !Self.needsEscaping(utf8) else { return false }
            appendQuoted(utf8)
            return true
        }
        guard !plain else { return }
        var escaped: [UInt8] = []
        Self.appendString(value, to: &escaped)
        escaped.withUnsafeBufferPointer { put($0) }
    }

    /// Whether any byte of `utf8` is one a JSON string cannot hold as it is: eight bytes at a
    /// time (each test is exact for "any byte in the word"; bytes of 0x80 and above, the rest of
    /// multi-byte characters, never match).
    private static func needsEscaping(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = utf8.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// Some byte of `word` below `limit` (at most 0x80).
        func below(_ word: UInt64, _ limit: UInt64) -> Bool { (word &- ones &* limit) & ~word & highs != 0 }
        var index = 0
        while index + 8 <= utf8.count {
            let word = UnsafeRawPointer(start + index).loadUnaligned(as: UInt64.self)
            if below(word, 0x20) || below(word ^ (ones &* 0x22), 1) || below(word ^ (ones &* 0x5C), 1) {
                return true
            }
            index += 8
        }
        while index < utf8.count {
            if escaped(start[index]) { return true }
            index += 1
        }
        return false
    }

    /// Bytes a JSON string cannot hold as they are.
    @inline(__always)
    private static func escaped(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// `value` as a JSON string, quoted and escaped, onto `bytes`: the one escaping of hrm's JSON
    /// (JSON lines, and `JSONValue.text` for what hrm passes on).
    package static func appendString(_ value: String, to bytes: inout [UInt8]) {
        var value = value
        value.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            defer { bytes.append(UInt8(ascii: "\"")) }
            guard needsEscaping(utf8) else { return bytes.append(contentsOf: utf8) }
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
