import TOMLKit

/// The one place that talks to TOMLKit (toml++): TOML text in, plain `ConfigEntry` values out,
/// or the syntax error with its line and column.
enum TOMLDocument {
    struct SyntaxError: Error, Sendable, Equatable {
        let line: Int
        let column: Int
        let message: String
    }

    static func parse(_ text: String) throws(SyntaxError) -> [ConfigEntry] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw SyntaxError(
                line: error.source.begin.line, column: error.source.begin.column, message: error.description)
        } catch {
            throw SyntaxError(line: 0, column: 0, message: "\(error)")
        }
        return entries(of: table)
    }

    /// `keys` and `values` come in the same (toml++'s) order; TOMLKit's own iterator looks each
    /// key up again by its C string, which traps on a key with a NUL in it.
    private static func entries(of table: TOMLTable) -> [ConfigEntry] {
        zip(table.keys, table.values).map { ConfigEntry(key: $0, value: value($1)) }
    }

    private static func value(_ node: TOMLValue) -> ConfigValue {
        switch node.type {
        case .string: .string(node.string ?? "")
        case .int: node.int.map { .integer($0) } ?? .dateOrTime
        case .double: node.double.map { .float($0) } ?? .dateOrTime
        case .bool: node.bool.map { .boolean($0) } ?? .dateOrTime
        case .table: node.table.map { .table(entries(of: $0)) } ?? .table([])
        case .array:
            if let array = node.array {
                .array((0..<array.count).map { value(array[$0].tomlValue) })
            } else {
                .array([])
            }
        case .date, .time, .dateTime: .dateOrTime
        }
    }
}
