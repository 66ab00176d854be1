import Monitor
import Outputs
import SessionLibrary

/// A value of the config file, as TOML gave it: plain Swift values, so that reading the settings
/// out of it needs no TOML library and can be tested without one.
indirect enum ConfigValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case array([ConfigValue])
    case table([ConfigEntry])
    /// A date, a time or a date-time: no setting takes one.
    case dateOrTime

    /// What it is, for messages: `the string "abc"`, `the integer -5`, `a table`.
    var spoken: String {
        switch self {
        case .string(let text): "the string \"\(TerminalText.sanitised(text, limit: 60))\""
        case .integer(let value): "the integer \(value)"
        case .float(let value): "the number \(value)"
        case .boolean(let value): "\(value)"
        case .array(let values): "the array \(Self.literal(values))"
        case .table: "a table"
        case .dateOrTime: "a date or time"
        }
    }

    /// `[100, 90]`: an array as TOML writes it, short values only.
    private static func literal(_ values: [ConfigValue]) -> String {
        let parts = values.prefix(12).map { value in
            switch value {
            case .string(let text): "\"\(TerminalText.sanitised(text, limit: 30))\""
            case .integer(let value): "\(value)"
            case .float(let value): "\(value)"
            case .boolean(let value): "\(value)"
            case .array: "[…]"
            case .table: "{…}"
            case .dateOrTime: "(date)"
            }
        }
        return "[" + parts.joined(separator: ", ") + (values.count > 12 ? ", …" : "") + "]"
    }
}

/// One `key = value` of a table, in the order TOML gave them, with the line of the key.
struct ConfigEntry: Sendable, Equatable {
    var key: String
    var value: ConfigValue
    var line: Int? = nil
}
