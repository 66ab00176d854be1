/// Text from outside hrm made safe to print for people: a device's name, model or maker (any
/// radio nearby chooses its own), bluetoothd's error messages, a line of `decode` input.
///
/// Printed raw, such text could drive the terminal (ESC sequences retitle the window, move the
/// cursor or rewrite what is shown), ring it (BEL), forge lines (CR, LF, U+2028), turn the text
/// after it around (bidi overrides) or flood the screen (a name of 100 KB). So every character
/// that is not plain text is written as a visible escape (`\e`, `\a`, `\n`, `\r`, `\t`, `\x7f`,
/// `\u{202E}`), and the text is cut at a limit with `…`.
///
/// This is for text meant for people only: JSON output escapes on its own terms and carries the
/// exact value. A backslash is left as it is, so sanitising twice changes nothing (what was
/// escaped is printable ASCII); the exact bytes are what `--json` is for.
package enum TerminalText {
    /// A name, a model, a manufacturer: longer than any real one (BLE names fit in 248 bytes, and
    /// advertised ones in 29).
    package static let nameLimit = 64
    /// A message (bluetoothd's error text, a status detail).
    package static let messageLimit = 200

    /// `text` with every unsafe character escaped, cut after at most `limit` characters of the
    /// result (an escape counts at its printed length) with `…` added when cut. Cuts fall between
    /// characters (a letter keeps its accents), never inside an escape.
    package static func sanitised(_ text: String, limit: Int) -> String {
        // Nearly every name and message is plain and short: returned as it is.
        if text.utf8.count <= limit, !text.unicodeScalars.contains(where: { escape($0) != nil }) {
            return text
        }
        var result = ""
        var used = 0
        for character in text {
            var piece = ""
            for scalar in character.unicodeScalars {
                if let escaped = escape(scalar) {
                    piece += escaped
                } else {
                    piece.unicodeScalars.append(scalar)
                }
            }
            let cost = piece.unicodeScalars.count
            if cost > limit - used { return result + "…" }
            result += piece
            used += cost
        }
        return result
    }

    /// How `scalar` is written, or nil when it is printed as it is. Escaped: the C0 controls
    /// (U+0000-U+001F), DEL, the C1 controls (U+0080-U+009F, U+009B alone is a CSI on many
    /// terminals), the line and paragraph separators, and the bidi marks, embeddings, overrides
    /// and isolates.
    package static func escape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar.value {
        case 0x07: "\\a"
        case 0x09: "\\t"
        case 0x0A: "\\n"
        case 0x0D: "\\r"
        case 0x1B: "\\e"
        case 0x00..<0x20, 0x7F, 0x80...0x9F: "\\x" + hex(scalar.value, width: 2, uppercase: false)
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
            "\\u{" + hex(scalar.value, width: 4, uppercase: true) + "}"
        default: nil
        }
    }

    private static func hex(_ value: UInt32, width: Int, uppercase: Bool) -> String {
        let digits = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(width - digits.count, 0)) + digits
    }
}

extension TerminalText {
    /// The display columns `text` takes on a terminal, as wcwidth(3) counts them without a
    /// locale: two for East Asian wide and fullwidth characters and emoji shown as emoji, none
    /// for a mark or a format character alone, one otherwise. Ambiguous-width characters (♥, the
    /// sparkline's blocks) count one, as terminals outside CJK locales show them. For text
    /// already sanitised (no controls).
    package static func columns(_ text: String) -> Int {
        // Nearly everything hrm shows: one column a byte.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
        return text.reduce(0) { $0 + columns(of: $1) }
    }

    /// The columns of one character (a grapheme cluster: a letter with its marks counts as the
    /// letter).
    package static func columns(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.properties.isEmojiPresentation || scalars.contains(where: { $0.value == 0xFE0F }) {
            return 2
        }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
            0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// `text` in at most `limit` display columns: cut with `…` when it is wider.
    package static func cut(_ text: String, columns limit: Int) -> String {
        guard columns(text) > limit else { return text }
        var result = ""
        var used = 0
        for character in text {
            let width = columns(of: character)
            // Room kept for the ellipsis.
            guard used + width <= limit - 1 else { break }
            result.append(character)
            used += width
        }
        return result + "…"
    }

    /// `text` with spaces after it to `width` display columns (as it is when wider).
    package static func padded(_ text: String, columns width: Int) -> String {
        text + String(repeating: " ", count: max(width - columns(text), 0))
    }
}
