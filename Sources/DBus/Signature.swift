/// One complete D-Bus type.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    /// The basic types, in signature order: `y b n q i u x t d`.
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    /// `s o g h`: string, object path, signature, Unix file descriptor.
    case string, objectPath, signature, unixFD
    /// `v`: a value of any type that carries its own signature.
    case variant
    /// `a` + element type.
    case array(DBusType)
    /// `a{kv}`: a dictionary (an array of dict entries); the key is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    /// `(…)`: a struct with at least one field.
    case structure([DBusType])

    /// True for the fixed and string-like types (`y`…`h`), which alone may be dictionary keys.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// The type's signature string, e.g. `a{sv}`.
    public var description: String {
        var out = ""
        append(to: &out)
        return out
    }

    func append(to out: inout String) {
        switch self {
        case .byte: out += "y"
        case .boolean: out += "b"
        case .int16: out += "n"
        case .uint16: out += "q"
        case .int32: out += "i"
        case .uint32: out += "u"
        case .int64: out += "x"
        case .uint64: out += "t"
        case .double: out += "d"
        case .string: out += "s"
        case .objectPath: out += "o"
        case .signature: out += "g"
        case .unixFD: out += "h"
        case .variant: out += "v"
        case .array(let element):
            out += "a"
            element.append(to: &out)
        case .dictionary(let key, let value):
            out += "a{"
            key.append(to: &out)
            value.append(to: &out)
            out += "}"
        case .structure(let fields):
            out += "("
            for field in fields { field.append(to: &out) }
            out += ")"
        }
    }

    /// Parses one complete type.
    public init(_ string: String) throws(DBusError) {
        let signature = try Signature(string)
        guard signature.types.count == 1 else {
            throw DBusError(.invalidSignature, "\(string.debugDescription) is not exactly one complete type")
        }
        self = signature.types[0]
    }

    /// The nesting depths of this type: arrays, structs (dict entries count as structs).
    func depths() -> (array: Int, structure: Int) {
        switch self {
        case .array(let element):
            let d = element.depths()
            return (d.array + 1, d.structure)
        case .dictionary(let key, let value):
            let k = key.depths(), v = value.depths()
            return (max(k.array, v.array) + 1, max(k.structure, v.structure) + 1)
        case .structure(let fields):
            var a = 0, s = 0
            for f in fields {
                let d = f.depths()
                a = max(a, d.array)
                s = max(s, d.structure)
            }
            return (a, s + 1)
        default:
            return (0, 0)
        }
    }
}

/// A validated signature: a sequence of complete types, at most 255 bytes, nesting within the
/// specification's limits (32 arrays, 32 structs).
public struct Signature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The complete types, in order.
    public let types: [DBusType]
    /// The signature as text, e.g. `sa{sv}as`.
    public let rawValue: String

    /// No types: the signature of an empty body.
    public static let empty = Signature(validatedTypes: [], rawValue: "")

    /// Parses and validates `string`; throws `.invalidSignature` saying what is wrong.
    public init(_ string: String) throws(DBusError) {
        var parser = SignatureParser(bytes: Array(string.utf8), text: string)
        types = try parser.parseAll()
        rawValue = string
    }

    /// A signature literal in code; an invalid one traps (a programming error).
    public init(stringLiteral value: String) {
        do {
            try self.init(value)
        } catch {
            preconditionFailure("invalid signature literal \(value): \(error.message)")
        }
    }

    /// The signature of `types`; throws `.invalidSignature` past 255 bytes or 32 nested arrays or structs.
    public init(_ types: [DBusType]) throws(DBusError) {
        var text = ""
        for t in types { t.append(to: &text) }
        guard text.utf8.count <= 255 else {
            throw DBusError(.invalidSignature, "signature \(text.prefix(40))… is longer than 255 bytes")
        }
        for t in types {
            let d = t.depths()
            guard d.array <= 32, d.structure <= 32 else {
                throw DBusError(
                    .invalidSignature, "signature \(text.prefix(40))… nests deeper than 32 arrays or structs")
            }
        }
        self.types = types
        rawValue = text
    }

    init(validatedTypes: [DBusType], rawValue: String) {
        types = validatedTypes
        self.rawValue = rawValue
    }

    /// The signature as text.
    public var description: String { rawValue }
    /// True for the empty signature (no body).
    public var isEmpty: Bool { types.isEmpty }
}

private struct SignatureParser {
    let bytes: [UInt8]
    let text: String
    var index = 0

    func fail(_ why: String) -> DBusError {
        DBusError(.invalidSignature, "invalid signature \(text.debugDescription): \(why) at offset \(index)")
    }

    mutating func parseAll() throws(DBusError) -> [DBusType] {
        guard bytes.count <= 255 else { throw fail("longer than 255 bytes") }
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne(arrayDepth: 0, structDepth: 0))
        }
        return types
    }

    mutating func parseOne(arrayDepth: Int, structDepth: Int) throws(DBusError) -> DBusType {
        guard index < bytes.count else { throw fail("incomplete type") }
        let c = bytes[index]
        index += 1
        switch c {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrayDepth < 32 else { throw fail("more than 32 nested arrays") }
            if index < bytes.count && bytes[index] == UInt8(ascii: "{") {
                guard structDepth < 32 else { throw fail("more than 32 nested structs") }
                index += 1
                let key = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard key.isBasic else { throw fail("dict key is not a basic type") }
                let value = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw fail("dict entry must have exactly two types and end with '}'")
                }
                index += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < 32 else { throw fail("more than 32 nested structs") }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw fail("unterminated struct") }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    break
                }
                fields.append(try parseOne(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
            guard !fields.isEmpty else { throw fail("empty struct") }
            return .structure(fields)
        default:
            index -= 1
            throw fail("unexpected character \(String(decoding: [c], as: UTF8.self).debugDescription)")
        }
    }
}
