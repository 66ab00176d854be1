internal import Glibc
import Synchronization

/// A D-Bus value of any type. Containers keep their element types, so an empty `a{sv}` is still
/// an `a{sv}` and an empty `ao` still an `ao`. `ay` is always `.bytes`.
public enum Value: Sendable, Equatable, CustomStringConvertible {
    /// `y`: an unsigned 8-bit integer.
    case byte(UInt8)
    /// `b` (a UINT32 0 or 1 on the wire).
    case boolean(Bool)
    /// `n`.
    case int16(Int16)
    /// `q`.
    case uint16(UInt16)
    /// `i`.
    case int32(Int32)
    /// `u`.
    case uint32(UInt32)
    /// `x`.
    case int64(Int64)
    /// `t`.
    case uint64(UInt64)
    /// `d`: an IEEE 754 double.
    case double(Double)
    /// `s`: UTF-8 without NUL.
    case string(String)
    /// `o`.
    case objectPath(ObjectPath)
    /// `g`.
    case signature(Signature)
    /// `h`: a file descriptor passed beside the message (an index into its fds on the wire).
    case unixFD(UnixFD)
    /// `ay`.
    case bytes([UInt8])
    /// `a` + element type; every element must be of that type.
    case array(DBusType, [Value])
    /// `a{kv}`, in wire order.
    case dictionary(key: DBusType, value: DBusType, [DictEntry])
    /// `(…)`.
    case structure([Value])
    /// `v`.
    indirect case variant(Value)

    /// The value's complete type; `.bytes` is `ay`, a structure the types of its fields.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .bytes: .array(.byte)
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// For logs and messages: numbers plain, strings quoted, `o"/path"`, `ay[1 2 ff]`, `<type: value>`.
    public var description: String {
        switch self {
        case .byte(let v): "\(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "\(v)"
        case .uint16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .uint64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): v.debugDescription
        case .objectPath(let v): "o\"\(v)\""
        case .signature(let v): "g\"\(v)\""
        case .unixFD(let v): v.description
        case .bytes(let v): "ay[" + v.map { String($0, radix: 16) }.joined(separator: " ") + "]"
        case .array(_, let v): "[" + v.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let v):
            "{" + v.map { "\($0.key.description): \($0.value.description)" }.joined(separator: ", ") + "}"
        case .structure(let v): "(" + v.map(\.description).joined(separator: ", ") + ")"
        case .variant(let v): "<\(v.type): \(v.description)>"
        }
    }

    /// An `a{sv}` from a Swift dictionary (keys sorted, values wrapped in variants).
    public static func propertyMap(_ map: [String: Value]) -> Value {
        .dictionary(
            key: .string, value: .variant,
            map.sorted { $0.key < $1.key }.map { DictEntry(.string($0.key), .variant($0.value)) })
    }

    /// An `as`.
    public static func strings(_ values: [String]) -> Value { .array(.string, values.map(Value.string)) }

    /// An `ao`.
    public static func objectPaths(_ values: [ObjectPath]) -> Value {
        .array(.objectPath, values.map(Value.objectPath))
    }

    /// The value inside any number of variants.
    public var unwrapped: Value {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// Decodes this value as `T`, or throws `.typeMismatch` saying what was expected and found.
    public func decode<T: DBusValueConvertible>(as type: T.Type = T.self) throws(DBusError) -> T {
        try T(dbusValue: self)
    }

    /// This `a{sv}` as a dictionary of unwrapped values.
    public func propertyMap() throws(DBusError) -> [String: Value] {
        guard case .dictionary(.string, .variant, let entries) = self else {
            throw .typeMismatch(expected: "a{sv}", got: self)
        }
        var out: [String: Value] = [:]
        out.reserveCapacity(entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let value) = entry.value else {
                throw .typeMismatch(expected: "a{sv}", got: self)
            }
            out[key] = value
        }
        return out
    }

    /// This `a{sa{sv}}` (interfaces and their properties, as in InterfacesAdded).
    public func interfaceMap() throws(DBusError) -> [String: [String: Value]] {
        guard case .dictionary(.string, .dictionary(.string, .variant), let entries) = self else {
            throw .typeMismatch(expected: "a{sa{sv}}", got: self)
        }
        var out: [String: [String: Value]] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key else {
                throw .typeMismatch(expected: "a{sa{sv}}", got: self)
            }
            out[key] = try entry.value.propertyMap()
        }
        return out
    }

    /// This `a{oa{sa{sv}}}` (GetManagedObjects).
    public func managedObjects() throws(DBusError) -> [ObjectPath: [String: [String: Value]]] {
        guard
            case .dictionary(.objectPath, .dictionary(.string, .dictionary(.string, .variant)), let entries) =
                self
        else { throw .typeMismatch(expected: "a{oa{sa{sv}}}", got: self) }
        var out: [ObjectPath: [String: [String: Value]]] = [:]
        for entry in entries {
            guard case .objectPath(let key) = entry.key else {
                throw .typeMismatch(expected: "a{oa{sa{sv}}}", got: self)
            }
            out[key] = try entry.value.interfaceMap()
        }
        return out
    }
}

/// One entry of a dictionary value.
public struct DictEntry: Sendable, Equatable {
    /// A basic value (the dictionary's key type).
    public var key: Value
    /// A value of the dictionary's value type.
    public var value: Value
    /// An entry mapping `key` to `value`.
    public init(_ key: Value, _ value: Value) {
        self.key = key
        self.value = value
    }
}

extension DBusError {
    static func typeMismatch(expected: String, got value: Value, context: String? = nil) -> DBusError {
        let prefix = context.map { "\($0): " } ?? ""
        return DBusError(
            .typeMismatch, "\(prefix)expected a value of type '\(expected)', got '\(value.type)'")
    }
}

extension Dictionary where Key == String, Value == DBus.Value {
    /// The property `name` decoded as `T`, nil if absent; throws if present with another type.
    public func decode<T: DBusValueConvertible>(_ name: String, as type: T.Type = T.self) throws(DBusError)
        -> T?
    {
        guard let value = self[name] else { return nil }
        do {
            return try T(dbusValue: value.unwrapped)
        } catch {
            throw DBusError(.typeMismatch, "property '\(name)': \(error.message)")
        }
    }

    /// The property `name` decoded as `T`; throws if absent or of another type.
    public func require<T: DBusValueConvertible>(_ name: String, as type: T.Type = T.self) throws(DBusError)
        -> T
    {
        guard let value = try decode(name, as: type) else {
            throw DBusError(.typeMismatch, "property '\(name)' is missing")
        }
        return value
    }
}

/// An owned Unix file descriptor (D-Bus type `h`). The object closes its descriptor when it is
/// deinitialised unless ownership was taken with `take()`. Received descriptors are already
/// duplicates owned by this object; sending one duplicates it again, so the sender keeps its own.
public final class UnixFD: Sendable, Equatable, CustomStringConvertible {
    private let fd: Mutex<Int32>

    /// Takes ownership of `descriptor` (it will be closed by this object).
    public init(taking descriptor: Int32) {
        fd = Mutex(descriptor)
    }

    /// Duplicates `descriptor` (close-on-exec); the caller keeps its own.
    public convenience init(duplicating descriptor: Int32) throws(DBusError) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw DBusError(.invalidValue, "cannot duplicate fd \(descriptor): \(systemErrorText())")
        }
        self.init(taking: copy)
    }

    /// The descriptor, or nil once taken or closed. Do not close it yourself.
    public var descriptor: Int32? {
        fd.withLock { $0 >= 0 ? $0 : nil }
    }

    /// Gives up ownership: the caller must close the returned descriptor.
    public func take() -> Int32? {
        fd.withLock { value in
            defer { value = -1 }
            return value >= 0 ? value : nil
        }
    }

    /// Closes the descriptor now (idempotent).
    public func close() {
        if let d = take() { _ = Glibc.close(d) }
    }

    deinit { close() }

    /// Identity: two objects are equal only when they are the same object.
    public static func == (a: UnixFD, b: UnixFD) -> Bool { a === b }
    /// `fd(7)`, or `fd(closed)` once taken or closed.
    public var description: String { "fd(\(descriptor.map(String.init) ?? "closed"))" }
}

/// A Swift type with a D-Bus representation.
public protocol DBusValueConvertible: Sendable {
    /// The D-Bus type values of this Swift type have.
    static var dbusType: DBusType { get }
    /// The Swift value of a D-Bus value; throws `.typeMismatch` when `dbusValue` is of another type.
    init(dbusValue: Value) throws(DBusError)
    /// The D-Bus value to send.
    var dbusValue: Value { get }
}

extension DBusValueConvertible {
    static func mismatch(_ value: Value) -> DBusError { .typeMismatch(expected: "\(dbusType)", got: value) }
}

extension UInt8: DBusValueConvertible {
    /// `y`.
    public static var dbusType: DBusType { .byte }
    /// The value of a `.byte`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .byte(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.byte(self)`.
    public var dbusValue: Value { .byte(self) }
}
extension Bool: DBusValueConvertible {
    /// `b`.
    public static var dbusType: DBusType { .boolean }
    /// The value of a `.boolean`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .boolean(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.boolean(self)`.
    public var dbusValue: Value { .boolean(self) }
}
extension Int16: DBusValueConvertible {
    /// `n`.
    public static var dbusType: DBusType { .int16 }
    /// The value of a `.int16`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.int16(self)`.
    public var dbusValue: Value { .int16(self) }
}
extension UInt16: DBusValueConvertible {
    /// `q`.
    public static var dbusType: DBusType { .uint16 }
    /// The value of a `.uint16`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.uint16(self)`.
    public var dbusValue: Value { .uint16(self) }
}
extension Int32: DBusValueConvertible {
    /// `i`.
    public static var dbusType: DBusType { .int32 }
    /// The value of a `.int32`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.int32(self)`.
    public var dbusValue: Value { .int32(self) }
}
extension UInt32: DBusValueConvertible {
    /// `u`.
    public static var dbusType: DBusType { .uint32 }
    /// The value of a `.uint32`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.uint32(self)`.
    public var dbusValue: Value { .uint32(self) }
}
extension Int64: DBusValueConvertible {
    /// `x`.
    public static var dbusType: DBusType { .int64 }
    /// The value of a `.int64`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.int64(self)`.
    public var dbusValue: Value { .int64(self) }
}
extension UInt64: DBusValueConvertible {
    /// `t`.
    public static var dbusType: DBusType { .uint64 }
    /// The value of a `.uint64`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.uint64(self)`.
    public var dbusValue: Value { .uint64(self) }
}
extension Double: DBusValueConvertible {
    /// `d`.
    public static var dbusType: DBusType { .double }
    /// The value of a `.double`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .double(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.double(self)`.
    public var dbusValue: Value { .double(self) }
}
extension String: DBusValueConvertible {
    /// `s`.
    public static var dbusType: DBusType { .string }
    /// The value of a `.string`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .string(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.string(self)`.
    public var dbusValue: Value { .string(self) }
}
extension ObjectPath: DBusValueConvertible {
    /// `o`.
    public static var dbusType: DBusType { .objectPath }
    /// The value of a `.objectPath`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .objectPath(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.objectPath(self)`.
    public var dbusValue: Value { .objectPath(self) }
}
extension Signature: DBusValueConvertible {
    /// `g`.
    public static var dbusType: DBusType { .signature }
    /// The value of a `.signature`; throws `.typeMismatch` for any other value.
    public init(dbusValue: Value) throws(DBusError) {
        guard case .signature(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// `.signature(self)`.
    public var dbusValue: Value { .signature(self) }
}
extension UnixFD: DBusValueConvertible {
    /// `h`.
    public static var dbusType: DBusType { .unixFD }
    /// A duplicate of a `.unixFD`'s descriptor, owned by this object; throws `.typeMismatch` otherwise.
    public convenience init(dbusValue: Value) throws(DBusError) {
        guard case .unixFD(let v) = dbusValue, let d = v.descriptor else { throw Self.mismatch(dbusValue) }
        try self.init(duplicating: d)
    }
    /// `.unixFD(self)`.
    public var dbusValue: Value { .unixFD(self) }
}
extension Value: DBusValueConvertible {
    /// A `Value` decodes from anything; as a value to send it is wrapped in a variant.
    public static var dbusType: DBusType { .variant }
    /// Any value, its variants unwrapped; never throws.
    public init(dbusValue: Value) throws(DBusError) { self = dbusValue.unwrapped }
    /// `.variant(self)`.
    public var dbusValue: Value { .variant(self) }
}

extension Array: DBusValueConvertible where Element: DBusValueConvertible {
    /// `a` + the element's type.
    public static var dbusType: DBusType { .array(Element.dbusType) }
    /// The elements of an array of `Element`'s type (`.bytes` for `[UInt8]`); throws `.typeMismatch` for
    /// any other value or element.
    public init(dbusValue: Value) throws(DBusError) {
        switch dbusValue {
        case .bytes(let bytes) where Element.self == UInt8.self:
            // `ay` is stored as `.bytes`; this is [UInt8] itself.
            self = bytes.map { b in unsafeBitCast(b, to: Element.self) }
        case .array(let type, let items) where type == Element.dbusType:
            var out: [Element] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try Element(dbusValue: item)) }
            self = out
        default:
            throw Self.mismatch(dbusValue)
        }
    }
    /// `.bytes` for `[UInt8]`, else `.array` of the elements' values.
    public var dbusValue: Value {
        if Element.self == UInt8.self { return .bytes(map { unsafeBitCast($0, to: UInt8.self) }) }
        return .array(Element.dbusType, map(\.dbusValue))
    }
}

extension Dictionary: DBusValueConvertible where Key: DBusValueConvertible, Value: DBusValueConvertible {
    /// `a{kv}` of the key's and the value's types.
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    /// The entries of a dictionary with these key and value types (any value type when `Value` is
    /// `DBus.Value`); a repeated key keeps the last entry. Throws `.typeMismatch` otherwise.
    public init(dbusValue: DBus.Value) throws(DBusError) {
        guard case .dictionary(let k, let v, let entries) = dbusValue, k == Key.dbusType,
            v == Value.dbusType || Value.dbusType == .variant
        else { throw Self.mismatch(dbusValue) }
        var out: [Key: Value] = [:]
        out.reserveCapacity(entries.count)
        for entry in entries { out[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = out
    }
    /// `.dictionary` of the entries, in the dictionary's (unspecified) order.
    public var dbusValue: DBus.Value {
        .dictionary(
            key: Key.dbusType, value: Value.dbusType, map { DictEntry($0.key.dbusValue, $0.value.dbusValue) })
    }
}
