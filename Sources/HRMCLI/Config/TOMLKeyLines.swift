/// The line each key of a TOML document is written on, for messages about its value: TOMLKit
/// gives source positions for syntax errors only, not for the values of a parsed document.
///
/// A line scanner, run on text that already parsed: table headers (`[mqtt]`), keys (bare,
/// quoted, dotted) before `=`, and enough of the values (strings, multi-line strings, brackets)
/// to know where the next key can start. Keys of an inline table (`mqtt = { url = "…" }`) are
/// found at the line of the table's own key.
struct TOMLKeyLines: Sendable {
    private var lines: [[String]: Int] = [:]

    init(_ text: String) {
        var scanner = Scanner(text: Array(text.unicodeScalars))
        scanner.run { path, line in
            if lines[path] == nil { lines[path] = line }
        }
    }

    /// The line of `path` (`["mqtt", "url"]`), else of the nearest enclosing key or table that
    /// was written; nil when none was.
    func line(of path: [String]) -> Int? {
        var path = path
        while !path.isEmpty {
            if let line = lines[path] { return line }
            path.removeLast()
        }
        return nil
    }

    private struct Scanner {
        let text: [Unicode.Scalar]
        var index = 0
        var line = 1

        init(text: [Unicode.Scalar]) { self.text = text }

        var atEnd: Bool { index >= text.count }
        var current: Unicode.Scalar? { atEnd ? nil : text[index] }

        mutating func advance() {
            if text[index] == "\n" { line += 1 }
            index += 1
        }

        mutating func skipBlanks() {
            while let c = current, c == " " || c == "\t" { advance() }
        }

        mutating func skipToLineEnd() {
            while let c = current, c != "\n" { advance() }
        }

        /// Every table header and key with its line, in document order.
        mutating func run(_ found: (_ path: [String], _ line: Int) -> Void) {
            var table: [String] = []
            while !atEnd {
                skipBlanks()
                guard let c = current else { return }
                if c == "\n" || c == "\r" {
                    advance()
                } else if c == "#" {
                    skipToLineEnd()
                } else if c == "[" {
                    advance()
                    let arrayOfTables = current == "["
                    if arrayOfTables { advance() }
                    let headerLine = line
                    table = keyPath()
                    found(table, headerLine)
                    skipToLineEnd()
                } else {
                    let keyLine = line
                    let key = table + keyPath()
                    found(key, keyLine)
                    if current == "=" { advance() }
                    skipValue()
                }
            }
        }

        /// A dotted key up to `=` or `]`, its parts unquoted.
        mutating func keyPath() -> [String] {
            var parts: [String] = []
            while true {
                skipBlanks()
                guard let c = current else { return parts }
                if c == "\"" || c == "'" {
                    parts.append(quoted(c))
                } else {
                    var part = ""
                    while let c = current,
                        c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "-" || c == "_"
                    {
                        part.unicodeScalars.append(c)
                        advance()
                    }
                    parts.append(part)
                }
                skipBlanks()
                guard current == "." else { return parts }
                advance()
            }
        }

        /// A one-line string starting at its quote; basic strings (`"`) with their escapes.
        mutating func quoted(_ quote: Unicode.Scalar) -> String {
            advance()
            var value = ""
            while let c = current, c != quote, c != "\n" {
                if c == "\\" && quote == "\"" {
                    advance()
                    guard let escaped = current else { break }
                    value.unicodeScalars.append(Self.unescaped(escaped))
                } else {
                    value.unicodeScalars.append(c)
                }
                advance()
            }
            if current == quote { advance() }
            return value
        }

        /// Enough of `\X` for keys people write: `\"`, `\\`, `\t`, `\n`. (`\uXXXX` in a key
        /// keeps its letter: a key that unusual is located by its table instead.)
        static func unescaped(_ c: Unicode.Scalar) -> Unicode.Scalar {
            switch c {
            case "t": "\t"
            case "n": "\n"
            default: c
            }
        }

        /// A value, however many lines its strings, arrays and inline tables take, and the
        /// comment after it.
        mutating func skipValue() {
            var depth = 0
            while let c = current {
                if c == "\"" || c == "'" {
                    skipString(c)
                    continue
                }
                if c == "#" {
                    skipToLineEnd()
                    continue
                }
                if c == "[" || c == "{" { depth += 1 }
                if c == "]" || c == "}" { depth -= 1 }
                if c == "\n" && depth <= 0 { return }
                advance()
            }
        }

        /// A string value: one-line or multi-line (`"""`, `'''`), escapes skipped in basic ones.
        mutating func skipString(_ quote: Unicode.Scalar) {
            let multiLine = index + 2 < text.count && text[index + 1] == quote && text[index + 2] == quote
            advance()
            if multiLine {
                advance()
                advance()
            }
            while let c = current {
                if c == "\\" && quote == "\"" {
                    advance()
                    if !atEnd { advance() }
                    continue
                }
                if !multiLine && c == "\n" { return }
                if c == quote {
                    if !multiLine {
                        advance()
                        return
                    }
                    if index + 2 < text.count && text[index + 1] == quote && text[index + 2] == quote {
                        advance()
                        advance()
                        advance()
                        // Up to two more quotes belong to the string (`""""` ends with a quote in it).
                        while current == quote { advance() }
                        return
                    }
                }
                advance()
            }
        }
    }
}
