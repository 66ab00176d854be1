/// Parses the hex forms people paste: `0648`, `06 48`, `06:48`, `0x06,0x48`, `06-48`.
///
/// Separators are white space, `:`, `,` and `-`. A token is a run of hex digits, with or without
/// a `0x` prefix: one digit is one byte (`6:48`), an even number of digits is that many bytes, an
/// odd number above one is ambiguous and refused. An empty string is an empty payload.
package enum HexPayload {
    package struct ParseError: Error, Equatable, CustomStringConvertible {
        /// 1-based column of the offending character in the text.
        package let column: Int
        package let reason: String

        package var description: String { "\(reason) at column \(column)" }

        /// The text around the offending column with a caret under it, for a terminal: at most
        /// `context` characters either side (`…` where the text goes on), control characters
        /// escaped (`TerminalText`), so that a line of 50 MB is not echoed whole, nor a line of
        /// input allowed to drive the terminal.
        package func pointing(into text: String, indent: String = "  ", context: Int = 40) -> String {
            let scalars = text.unicodeScalars
            let bad = max(column - 1, 0)
            func index(_ from: String.UnicodeScalarView.Index, _ distance: Int)
                -> String.UnicodeScalarView.Index
            {
                scalars.index(from, offsetBy: distance, limitedBy: scalars.endIndex) ?? scalars.endIndex
            }
            let start = index(scalars.startIndex, max(bad - context, 0))
            let offending = index(start, min(bad, context))
            let end = index(offending, context + 1)
            func shown(_ range: Range<String.UnicodeScalarView.Index>) -> String {
                TerminalText.sanitised(String(scalars[range]), limit: .max)
            }
            let before = (start > scalars.startIndex ? "…" : "") + shown(start..<offending)
            let after = shown(offending..<end) + (end < scalars.endIndex ? "…" : "")
            let pad = String(repeating: " ", count: before.count)
            return "\(indent)\(before)\(after)\n\(indent)\(pad)^"
        }
    }

    package static func parse(_ text: String) throws(ParseError) -> [UInt8] {
        var bytes: [UInt8] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if isSeparator(scalars[index]) {
                index += 1
                continue
            }
            let tokenStart = index
            var digitsStart = index
            if index + 1 < scalars.count, scalars[index] == "0",
                scalars[index + 1] == "x" || scalars[index + 1] == "X"
            {
                digitsStart = index + 2
            }
            var end = digitsStart
            while end < scalars.count, !isSeparator(scalars[end]) {
                guard hexValue(scalars[end]) != nil else {
                    throw ParseError(
                        column: end + 1, reason: "'\(scalars[end].escaped(asASCII: true))' is not a hex digit"
                    )
                }
                end += 1
            }
            let digits = scalars[digitsStart..<end]
            switch digits.count {
            case 0:
                throw ParseError(column: tokenStart + 1, reason: "'0x' has no digits after it")
            case 1:
                bytes.append(hexValue(digits[digits.startIndex]) ?? 0)
            case let count where count % 2 == 1:
                throw ParseError(column: tokenStart + 1, reason: "odd number of hex digits (\(count))")
            default:
                var i = digits.startIndex
                while i < digits.endIndex {
                    let high = hexValue(digits[i]) ?? 0
                    let low = hexValue(digits[i + 1]) ?? 0
                    bytes.append(high << 4 | low)
                    i += 2
                }
            }
            index = end
        }
        return bytes
    }

    /// Lower-case hex with no separators: the form hrm prints.
    package static func format(_ bytes: some Sequence<UInt8>) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar == ":" || scalar == "," || scalar == "-" || scalar.properties.isWhitespace
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar {
        case "0"..."9": UInt8(scalar.value - 48)
        case "a"..."f": UInt8(scalar.value - 97 + 10)
        case "A"..."F": UInt8(scalar.value - 65 + 10)
        default: nil
        }
    }
}
