import Monitor
import Outputs
import SessionLibrary

extension JSONValue {
    /// The value as compact JSON on one line, written from what was parsed (never the text it
    /// was parsed from): strings escaped as `JSONLine` escapes them (control characters, CR and LF
    /// too), integral numbers as integers (`72`, not `72.0`), others in their shortest exact form.
    var text: String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Integers are exact up to 2^53: written as such below that, as Doubles above.
    private static let exactIntegers = 9_007_199_254_740_992.0

    private func write(to out: inout [UInt8]) {
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONLine.appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .number(let value):
            if value == value.rounded(), abs(value) < Self.exactIntegers {
                out.append(contentsOf: String(Int64(value)).utf8)
            } else {
                out.append(contentsOf: JSONLine.number(value).utf8)
            }
        case .string(let value):
            JSONLine.appendString(value, to: &out)
        case .bool(let value):
            out.append(contentsOf: (value ? "true" : "false").utf8)
        case .null:
            out.append(contentsOf: "null".utf8)
        }
    }
}
