// Validated D-Bus names. Each type can only hold a string the D-Bus specification accepts, so
// nothing invalid ever reaches libdbus (which aborts the process on some invalid arguments).
// String literals are trusted as programmer input (invalid ones stop the program with a
// precondition); strings from outside go through the throwing initialisers.

private let maxNameLength = 255

@inline(__always) private func isAlpha(_ c: UInt8) -> Bool {
    (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
}
@inline(__always) private func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
@inline(__always) private func isNameChar(_ c: UInt8) -> Bool { isAlpha(c) || isDigit(c) || c == 0x5F }

/// Why `string` is not a valid name of kind `kind`, or nil if it is.
private func dottedNameProblem(_ string: String, allowHyphen: Bool, allowLeadingDigit: Bool) -> String? {
    let bytes = Array(string.utf8)
    if bytes.isEmpty { return "is empty" }
    if bytes.count > maxNameLength { return "is longer than 255 bytes" }
    var elements = 0
    var elementLength = 0
    for c in bytes {
        if c == 0x2E {  // "."
            if elementLength == 0 { return "has an empty element" }
            elements += 1
            elementLength = 0
            continue
        }
        let ok = isNameChar(c) || (allowHyphen && c == 0x2D)
        if !ok { return "contains the character \(String(decoding: [c], as: UTF8.self).debugDescription)" }
        if elementLength == 0 && isDigit(c) && !allowLeadingDigit {
            return "has an element starting with a digit"
        }
        elementLength += 1
    }
    if elementLength == 0 { return "has an empty element" }
    elements += 1
    if elements < 2 { return "needs at least two elements separated by '.'" }
    return nil
}

private func invalid(_ kind: String, _ string: String, _ problem: String) -> DBusError {
    DBusError(.invalidName, "invalid \(kind) \(string.debugDescription): \(problem)")
}

/// An object path such as `/org/bluez/hci0`.
public struct ObjectPath: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral
{
    /// The path as text, valid.
    public let rawValue: String

    /// `/`.
    public static let root = ObjectPath(unchecked: "/")

    /// A path from outside; throws `.invalidName` unless it starts with `/`, has no empty element, does
    /// not end with `/` (except `/` itself) and has only `[A-Za-z0-9_]` in its elements.
    public init(_ string: String) throws(DBusError) {
        if let problem = ObjectPath.problem(string) { throw invalid("object path", string, problem) }
        rawValue = string
    }

    /// A path literal in code; an invalid one traps (a programming error).
    public init(stringLiteral value: String) {
        guard ObjectPath.problem(value) == nil else {
            preconditionFailure("invalid object path literal \(value)")
        }
        rawValue = value
    }

    init(unchecked: String) { rawValue = unchecked }

    static func problem(_ string: String) -> String? {
        let bytes = Array(string.utf8)
        guard bytes.first == 0x2F else { return "must start with '/'" }
        if bytes.count == 1 { return nil }
        if bytes.last == 0x2F { return "must not end with '/'" }
        var previousSlash = false
        for c in bytes {
            if c == 0x2F {
                if previousSlash { return "has an empty element" }
                previousSlash = true
            } else {
                guard isNameChar(c) else {
                    return "contains the character \(String(decoding: [c], as: UTF8.self).debugDescription)"
                }
                previousSlash = false
            }
        }
        return nil
    }

    /// The path as text.
    public var description: String { rawValue }
    /// Byte order of the text, so that sorted paths put a parent before its children.
    public static func < (a: ObjectPath, b: ObjectPath) -> Bool { a.rawValue < b.rawValue }

    /// The path with `element` appended (`element` must be a valid path element).
    public func appending(_ element: String) throws(DBusError) -> ObjectPath {
        try ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// True if `self` is `namespace` or lies below it (`path_namespace` semantics).
    public func isInNamespace(_ namespace: ObjectPath) -> Bool {
        if namespace.rawValue == "/" || namespace.rawValue == rawValue { return true }
        return rawValue.utf8.count > namespace.rawValue.utf8.count
            && rawValue.hasPrefix(namespace.rawValue)
            && rawValue.utf8[
                rawValue.utf8.index(rawValue.utf8.startIndex, offsetBy: namespace.rawValue.utf8.count)]
                == 0x2F
    }

    /// True if `self` lies strictly below `ancestor`.
    public func isDescendant(of ancestor: ObjectPath) -> Bool { self != ancestor && isInNamespace(ancestor) }

    /// The parent path, or nil for `/`.
    public var parent: ObjectPath? {
        guard rawValue != "/", let slash = rawValue.lastIndex(of: "/") else { return nil }
        return slash == rawValue.startIndex ? .root : ObjectPath(unchecked: String(rawValue[..<slash]))
    }

    /// The last element (empty for `/`).
    public var lastElement: String {
        guard let slash = rawValue.lastIndex(of: "/") else { return "" }
        return String(rawValue[rawValue.index(after: slash)...])
    }
}

/// A bus name: a unique name (`:1.42`) or a well-known name (`org.bluez`).
public struct BusName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as text, valid.
    public let rawValue: String

    /// A name from outside; throws `.invalidName` unless it is a valid unique or well-known name (at
    /// most 255 bytes, two or more elements of `[A-Za-z0-9_-]`, a well-known one not starting with a digit).
    public init(_ string: String) throws(DBusError) {
        if let problem = BusName.problem(string) { throw invalid("bus name", string, problem) }
        rawValue = string
    }

    /// A bus name literal in code; an invalid one traps (a programming error).
    public init(stringLiteral value: String) {
        guard BusName.problem(value) == nil else { preconditionFailure("invalid bus name literal \(value)") }
        rawValue = value
    }

    init(unchecked: String) { rawValue = unchecked }

    static func problem(_ string: String) -> String? {
        if string.hasPrefix(":") {
            return dottedNameProblem(String(string.dropFirst()), allowHyphen: true, allowLeadingDigit: true)
        }
        return dottedNameProblem(string, allowHyphen: true, allowLeadingDigit: false)
    }

    /// True for a unique connection name (`:1.42`).
    public var isUnique: Bool { rawValue.hasPrefix(":") }
    /// The name as text.
    public var description: String { rawValue }

    /// The message bus itself.
    public static let bus = BusName(unchecked: "org.freedesktop.DBus")
}

/// An interface name such as `org.bluez.Device1`.
public struct InterfaceName: Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The name as text, valid.
    public let rawValue: String

    /// A name from outside; throws `.invalidName` unless it has two or more elements of
    /// `[A-Za-z0-9_]`, none starting with a digit, in at most 255 bytes.
    public init(_ string: String) throws(DBusError) {
        if let problem = InterfaceName.problem(string) { throw invalid("interface name", string, problem) }
        rawValue = string
    }

    /// An interface name literal in code; an invalid one traps (a programming error).
    public init(stringLiteral value: String) {
        guard InterfaceName.problem(value) == nil else {
            preconditionFailure("invalid interface name literal \(value)")
        }
        rawValue = value
    }

    init(unchecked: String) { rawValue = unchecked }

    static func problem(_ string: String) -> String? {
        dottedNameProblem(string, allowHyphen: false, allowLeadingDigit: false)
    }

    /// The name as text.
    public var description: String { rawValue }
    /// Byte order of the text.
    public static func < (a: InterfaceName, b: InterfaceName) -> Bool { a.rawValue < b.rawValue }

    /// `org.freedesktop.DBus.Properties`: Get, Set, GetAll and PropertiesChanged.
    public static let properties = InterfaceName(unchecked: "org.freedesktop.DBus.Properties")
    /// `org.freedesktop.DBus.Introspectable`: Introspect.
    public static let introspectable = InterfaceName(unchecked: "org.freedesktop.DBus.Introspectable")
    /// `org.freedesktop.DBus.Peer`: Ping and GetMachineId.
    public static let peer = InterfaceName(unchecked: "org.freedesktop.DBus.Peer")
    /// `org.freedesktop.DBus.ObjectManager`: GetManagedObjects, InterfacesAdded and InterfacesRemoved.
    public static let objectManager = InterfaceName(unchecked: "org.freedesktop.DBus.ObjectManager")
    /// `org.freedesktop.DBus`: the message bus's own methods and signals (AddMatch, NameOwnerChanged).
    public static let bus = InterfaceName(unchecked: "org.freedesktop.DBus")
}

/// A method, signal or property name such as `Connect`.
public struct MemberName: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral
{
    /// The name as text, valid.
    public let rawValue: String

    /// A name from outside; throws `.invalidName` unless it is 1-255 bytes of `[A-Za-z0-9_]` not
    /// starting with a digit.
    public init(_ string: String) throws(DBusError) {
        if let problem = MemberName.problem(string) { throw invalid("member name", string, problem) }
        rawValue = string
    }

    /// A member name literal in code; an invalid one traps (a programming error).
    public init(stringLiteral value: String) {
        guard MemberName.problem(value) == nil else {
            preconditionFailure("invalid member name literal \(value)")
        }
        rawValue = value
    }

    init(unchecked: String) { rawValue = unchecked }

    static func problem(_ string: String) -> String? {
        let bytes = Array(string.utf8)
        if bytes.isEmpty { return "is empty" }
        if bytes.count > maxNameLength { return "is longer than 255 bytes" }
        if isDigit(bytes[0]) { return "starts with a digit" }
        for c in bytes where !isNameChar(c) {
            return "contains the character \(String(decoding: [c], as: UTF8.self).debugDescription)"
        }
        return nil
    }

    /// The name as text.
    public var description: String { rawValue }
    /// Byte order of the text.
    public static func < (a: MemberName, b: MemberName) -> Bool { a.rawValue < b.rawValue }
}

/// An error name such as `org.bluez.Error.InProgress`.
public struct ErrorName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as text, valid.
    public let rawValue: String

    /// A name from outside; throws `.invalidName` unless it is valid as an interface name is.
    public init(_ string: String) throws(DBusError) {
        if let problem = InterfaceName.problem(string) { throw invalid("error name", string, problem) }
        rawValue = string
    }

    /// An error name literal in code; an invalid one traps (a programming error).
    public init(stringLiteral value: String) {
        guard InterfaceName.problem(value) == nil else {
            preconditionFailure("invalid error name literal \(value)")
        }
        rawValue = value
    }

    init(unchecked: String) { rawValue = unchecked }

    /// The name as text.
    public var description: String { rawValue }
}
