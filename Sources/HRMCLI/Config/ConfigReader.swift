import Monitor
import Outputs
import SessionLibrary

/// Reads the keys of one table of the config file, each as the kind of value its setting takes,
/// and turns anything else into an error at the key's line. It remembers which keys were asked
/// for, so that the rest can be reported as unknown, with the nearest known key as a suggestion.
struct ConfigReader {
    let path: String
    /// Where this table is: `[]` for the top level, `["mqtt"]` for `[mqtt]`.
    let table: [String]
    private let entries: [ConfigEntry]
    private var asked: [String] = []

    /// The line of the table itself (`[mqtt]`), for a key that has none.
    private let tableLine: Int?

    init(_ entries: [ConfigEntry], path: String, table: [String] = [], line: Int? = nil) {
        self.entries = entries
        self.path = path
        self.table = table
        self.tableLine = line
    }

    /// `mqtt.url`: a key as messages name it.
    func name(_ key: String) -> String { (table + [key]).joined(separator: ".") }

    /// The line `key` is written on (toml++'s position of the key).
    func line(_ key: String) -> Int? { entries.first { $0.key == key }?.line ?? tableLine }

    /// The value of `key`, if the table has it.
    mutating func value(_ key: String) -> ConfigValue? {
        asked.append(key)
        return entries.first { $0.key == key }?.value
    }

    func error(_ code: ConfigError.Code, _ key: String, _ message: String) -> ConfigError {
        ConfigError(code, path, line: line(key), "\(name(key)): \(message)")
    }

    /// `key: expected …, found the string "abc"`.
    func unexpected(_ key: String, _ expected: String, _ found: ConfigValue, code: ConfigError.Code)
        -> ConfigError
    {
        error(code, key, "expected \(expected), found \(found.spoken)")
    }

    mutating func string(_ key: String, _ expected: String) throws(ConfigError) -> String? {
        guard let found = value(key) else { return nil }
        guard case .string(let text) = found else { throw unexpected(key, expected, found, code: .wrongType) }
        if text.isEmpty { throw error(.badValue, key, "expected \(expected), found an empty string") }
        return text
    }

    mutating func boolean(_ key: String) throws(ConfigError) -> Bool? {
        guard let found = value(key) else { return nil }
        guard case .boolean(let flag) = found else {
            throw unexpected(key, "true or false", found, code: .wrongType)
        }
        return flag
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int>, _ expected: String) throws(ConfigError)
        -> Int?
    {
        guard let found = value(key) else { return nil }
        guard case .integer(let number) = found else {
            throw unexpected(key, expected, found, code: .wrongType)
        }
        guard range.contains(number) else { throw unexpected(key, expected, found, code: .badValue) }
        return number
    }

    /// One of `choices`' raw values (`format = "json"`).
    mutating func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, _: Choice.Type)
        throws(ConfigError)
        -> Choice? where Choice.RawValue == String
    {
        let expected = "one of " + Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let found = value(key) else { return nil }
        guard case .string(let text) = found else { throw unexpected(key, expected, found, code: .wrongType) }
        guard let chosen = Choice(rawValue: text) else {
            throw unexpected(key, expected, found, code: .badValue)
        }
        return chosen
    }

    /// A time as every time option takes it: a number of seconds (`20`, `2.5`) or a string with
    /// units (`"30s"`, `"2m"`, `"1h30m"`), above 0 and at most `maximum`; `0` too when
    /// `zeroAllowed` (it means "none").
    mutating func seconds(
        _ key: String, atLeast minimum: Double = 0, atMost maximum: Double, zeroAllowed: Bool = false
    )
        throws(ConfigError) -> Double?
    {
        let limits =
            minimum > 0
            ? "from \(Seconds.describe(minimum)) to \(Seconds.describe(maximum)) s"
            : "up to \(Seconds.describe(maximum)) s"
        let expected =
            "a number of seconds\(zeroAllowed ? " (0 for none)" : "") or a string with units (\"30s\", \"2m\"), \(limits)"
        guard let found = value(key) else { return nil }
        let seconds: Double?
        switch found {
        case .integer(let number): seconds = Double(number)
        case .float(let number): seconds = number
        case .string(let text): seconds = Seconds.parse(text)
        default: throw unexpected(key, expected, found, code: .wrongType)
        }
        guard let seconds, seconds.isFinite else { throw unexpected(key, expected, found, code: .badValue) }
        if zeroAllowed && seconds == 0 { return 0 }
        guard seconds > 0, seconds >= minimum, seconds <= maximum else {
            throw unexpected(key, expected, found, code: .badValue)
        }
        return seconds
    }

    /// A table (`[mqtt]`), read by `body`; what `body` did not ask for is unknown.
    mutating func table(_ key: String, _ body: (inout ConfigReader) throws(ConfigError) -> Void)
        throws(ConfigError) -> [ConfigWarning]
    {
        guard let found = value(key) else { return [] }
        guard case .table(let entries) = found else {
            throw unexpected(key, "a table ([\(name(key))])", found, code: .wrongType)
        }
        var reader = ConfigReader(entries, path: path, table: table + [key], line: line(key))
        try body(&reader)
        return reader.unknownKeys()
    }

    /// A warning for each key nobody asked for, in the order of the file.
    func unknownKeys() -> [ConfigWarning] {
        entries.filter { !asked.contains($0.key) }
            .map { entry in
                var message = "unknown key '\(TerminalText.sanitised(name(entry.key), limit: 60))' (ignored)"
                if let near = Self.nearest(entry.key, among: asked) {
                    message += "; did you mean '\(name(near))'?"
                }
                return ConfigWarning(path: path, line: line(entry.key), message: message)
            }
            .sorted { ($0.line ?? 0) < ($1.line ?? 0) }
    }

    /// The known key within two edits of `key` (a typo), if there is one.
    static func nearest(_ key: String, among known: [String]) -> String? {
        known.map { ($0, editDistance(key, $0)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance, for short keys.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.prefix(64))
        let b = Array(b.prefix(64))
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
