/// One Open Sound Control 1.0 message: an address pattern and its arguments, encoded as the
/// specification says (opensoundcontrol.org, "The Open Sound Control 1.0 Specification"): the
/// address, then the type tag string (a comma and one tag per argument), then the arguments, each
/// padded with zero bytes to a multiple of 4, numbers big-endian.
///
/// Only what hrm sends is here: 32-bit integers (`i`), 32-bit floats (`f`), strings (`s`) and the
/// booleans of OSC 1.1 that carry no bytes (`T`, `F`), which VRChat and python-osc read. A message
/// is encoded into bytes the caller owns; nothing here allocates a buffer of its own per call
/// besides the returned array.
public struct OSCMessage: Sendable, Equatable {
    /// The address pattern: `/avatar/parameters/HR`. Starts with `/`.
    public var address: String
    /// The arguments, in order.
    public var arguments: [OSCArgument]

    /// A message to `address` with `arguments`.
    public init(_ address: String, _ arguments: [OSCArgument]) {
        self.address = address
        self.arguments = arguments
    }

    /// The message's bytes, as one UDP datagram carries them.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(address.utf8.count + 8 + arguments.count * 5 + 8)
        Self.appendString(address, to: &bytes)
        var tags = ","
        for argument in arguments { tags.unicodeScalars.append(argument.tag) }
        Self.appendString(tags, to: &bytes)
        for argument in arguments {
            switch argument {
            case .int(let value): Self.appendBigEndian(UInt32(bitPattern: value), to: &bytes)
            case .float(let value): Self.appendBigEndian(value.bitPattern, to: &bytes)
            case .string(let value): Self.appendString(value, to: &bytes)
            case .bool: break
            }
        }
        return bytes
    }

    /// An OSC-string: the UTF-8 bytes, a terminating zero, then zeros to a multiple of 4 (so a
    /// string of 4 bytes takes 8).
    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
        let padding = 4 - text.utf8.count % 4
        bytes.append(contentsOf: repeatElement(0, count: padding))
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }
}

/// One argument of an `OSCMessage`.
public enum OSCArgument: Sendable, Equatable {
    /// `i`: a 32-bit two's complement integer.
    case int(Int32)
    /// `f`: a 32-bit IEEE 754 float.
    case float(Float)
    /// `s`: a string (UTF-8 here; OSC 1.0 says ASCII, and readers take UTF-8).
    case string(String)
    /// `T` or `F`: a boolean, carried by its tag alone.
    case bool(Bool)

    /// The type tag.
    var tag: Unicode.Scalar {
        switch self {
        case .int: "i"
        case .float: "f"
        case .string: "s"
        case .bool(let value): value ? "T" : "F"
        }
    }
}
