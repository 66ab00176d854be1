internal import Glibc
import Synchronization

/// A D-Bus value of any type. Containers keep their element types, so an empty `a{sv}` is still
/// an `a{sv}` and an empty `ao` still an `ao`. `ay` is always `.bytes`.
public enum Value: Sendable, Equatable, CustomStringConvertible {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
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
    public var key: Value
    public var value: Value
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

    public static func == (a: UnixFD, b: UnixFD) -> Bool { a === b }
    public var description: String { "fd(\(descriptor.map(String.init) ?? "closed"))" }
}

/// A Swift type with a D-Bus representation.
public protocol DBusValueConvertible: Sendable {
    static var dbusType: DBusType { get }
    init(dbusValue: Value) throws(DBusError)
    var dbusValue: Value { get }
}

extension DBusValueConvertible {
    static func mismatch(_ value: Value) -> DBusError { .typeMismatch(expected: "\(dbusType)", got: value) }
}

extension UInt8: DBusValueConvertible {
    public static var dbusType: DBusType { .byte }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .byte(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .byte(self) }
}
extension Bool: DBusValueConvertible {
    public static var dbusType: DBusType { .boolean }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .boolean(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .boolean(self) }
}
extension Int16: DBusValueConvertible {
    public static var dbusType: DBusType { .int16 }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .int16(self) }
}
extension UInt16: DBusValueConvertible {
    public static var dbusType: DBusType { .uint16 }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .uint16(self) }
}
extension Int32: DBusValueConvertible {
    public static var dbusType: DBusType { .int32 }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .int32(self) }
}
extension UInt32: DBusValueConvertible {
    public static var dbusType: DBusType { .uint32 }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .uint32(self) }
}
extension Int64: DBusValueConvertible {
    public static var dbusType: DBusType { .int64 }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .int64(self) }
}
extension UInt64: DBusValueConvertible {
    public static var dbusType: DBusType { .uint64 }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .uint64(self) }
}
extension Double: DBusValueConvertible {
    public static var dbusType: DBusType { .double }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .double(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .double(self) }
}
extension String: DBusValueConvertible {
    public static var dbusType: DBusType { .string }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .string(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .string(self) }
}
extension ObjectPath: DBusValueConvertible {
    public static var dbusType: DBusType { .objectPath }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .objectPath(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .objectPath(self) }
}
extension Signature: DBusValueConvertible {
    public static var dbusType: DBusType { .signature }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .signature(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    public var dbusValue: Value { .signature(self) }
}
extension UnixFD: DBusValueConvertible {
    public static var dbusType: DBusType { .unixFD }
    public convenience init(dbusValue: Value) throws(DBusError) {
        guard case .unixFD(let v) = dbusValue, let d = v.descriptor else { throw Self.mismatch(dbusValue) }
        try self.init(duplicating: d)
    }
    public var dbusValue: Value { .unixFD(self) }
}
extension Value: DBusValueConvertible {
    /// A `Value` decodes from anything; as a value to send it is wrapped in a variant.
    public static var dbusType: DBusType { .variant }
    public init(dbusValue: Value) throws(DBusError) { self = dbusValue.unwrapped }
    public var dbusValue: Value { .variant(self) }
}

extension Array: DBusValueConvertible where Element: DBusValueConvertible {
    public static var dbusType: DBusType { .array(Element.dbusType) }
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
    public var dbusValue: Value {
        if Element.self == UInt8.self { return .bytes(map { unsafeBitCast($0, to: UInt8.self) }) }
        return .array(Element.dbusType, map(\.dbusValue))
    }
}

extension Dictionary: DBusValueConvertible where Key: DBusValueConvertible, Value: DBusValueConvertible {
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    public init(dbusValue: DBus.Value) throws(DBusError) {
        guard case .dictionary(let k, let v, let entries) = dbusValue, k == Key.dbusType,
            v == Value.dbusType || Value.dbusType == .variant
        else { throw Self.mismatch(dbusValue) }
        var out: [Key: Value] = [:]
        out.reserveCapacity(entries.count)
        for entry in entries { out[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = out
    }
    public var dbusValue: DBus.Value {
        .dictionary(
            key: Key.dbusType, value: Value.dbusType, map { DictEntry($0.key.dbusValue, $0.value.dbusValue) })
    }
}
