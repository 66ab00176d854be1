import Foundation

/// hrm-sim's messages on stderr. They carry text from files hrm-sim did not write (a recording's
/// device address, a value of a scenario), so every control character is written as a visible
/// escape (`\e`, `\a`, `\x01`, `\u{202E}`), as hrm's `TerminalText` does: an ESC sequence from a
/// file must not retitle the window or rewrite the screen, nor a BEL ring it. (hrm-sim cannot
/// import HRMCLI; this is the same rule, kept small.)
enum StandardError {
    /// `message` and a newline on stderr, escaped.
    static func say(_ message: String) {
        FileHandle.standardError.write(Data((escaped(message) + "\n").utf8))
    }

    /// `message` with the C0 and C1 controls, DEL, the line and paragraph separators and the bidi
    /// controls escaped; a backslash stays as it is.
    static func escaped(_ message: String) -> String {
        var result = ""
        for scalar in message.unicodeScalars {
            switch scalar.value {
            case 0x07: result += "\\a"
            case 0x09: result += "\\t"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x1B: result += "\\e"
            case 0x00..<0x20, 0x7F, 0x80...0x9F: result += "\\x" + hex(scalar.value, width: 2)
            case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
                result += "\\u{" + hex(scalar.value, width: 4).uppercased() + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(width - digits.count, 0)) + digits
    }
}
