internal import CDBus
internal import CDBusShims

/// Every error this module throws. `code` is stable and meant for `switch`; `name` is the D-Bus
/// error name (the peer's for remote errors, a standard `org.freedesktop.DBus.Error.*` name for
/// local ones) and `message` says what was wrong.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Raw values are snake_case, as every error code hrm shows is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Any error without a more specific code (remote `…Error.Failed` or an unknown name).
        case failed
        /// No reply within the call's timeout (locally or the bus's `NoReply`/`Timeout`).
        case noReply = "no_reply"
        /// The destination name is not on the bus and cannot be activated.
        case serviceUnknown = "service_unknown"
        /// The name has no owner.
        case nameHasNoOwner = "name_has_no_owner"
        /// Bus policy or the peer refused the message.
        case accessDenied = "access_denied"
        /// The connection is closed or the bus went away.
        case disconnected
        /// Could not open or authenticate a connection.
        case connectionFailed = "connection_failed"
        /// No such method on the object and interface (`UnknownMethod`).
        case unknownMethod = "unknown_method"
        /// No object at the path (`UnknownObject`).
        case unknownObject = "unknown_object"
        /// The object does not have the interface (`UnknownInterface`).
        case unknownInterface = "unknown_interface"
        /// The interface has no such property (`UnknownProperty`).
        case unknownProperty = "unknown_property"
        /// A Set of a property that cannot be written (`PropertyReadOnly`).
        case propertyReadOnly = "property_read_only"
        /// The arguments do not fit the method (`InvalidArgs`): a peer said so, or an exported method's
        /// `MethodCall.decode` did.
        case invalidArgs = "invalid_args"
        /// A signature that is not valid D-Bus or not the one needed (a property Set with a value of
        /// another type; not one complete type where one was needed).
        case invalidSignature = "invalid_signature"
        /// A value of the wrong D-Bus type (a reply, argument or property decoded as something else).
        case typeMismatch = "type_mismatch"
        /// A string is not a valid object path, bus, interface, member or error name.
        case invalidName = "invalid_name"
        /// A value cannot be sent: wrong element type, too deep, too large, NUL in a string...
        case invalidValue = "invalid_value"
        /// Unix fd passing is not available on this connection.
        case notSupported = "not_supported"
        /// Out of memory, or out of eventfds or threads, while setting up a call or a connection.
        case noMemory = "no_memory"
        /// A message over the bus's limits (`LimitsExceeded`).
        case limitsExceeded = "limits_exceeded"
        /// The calling task was cancelled.
        case cancelled
    }

    /// What kind of error; stable, for `switch`.
    public var code: Code
    /// The D-Bus error name: the peer's for a remote error, else the standard name for `code`.
    public var name: ErrorName
    /// What was wrong, in words (a remote error's first string argument).
    public var message: String

    /// An error to throw from an exported method: the caller sees `name` and `message`.
    public init(name: ErrorName, message: String) {
        self.name = name
        self.message = message
        self.code = DBusError.code(forName: name.rawValue)
    }

    /// A local error with the standard name for `code`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        self.name = DBusError.standardName(for: code)
    }

    /// `org.freedesktop.DBus.Error.NoReply: …`: the name, then the message.
    public var description: String { "\(name.rawValue): \(message)" }

    private static let prefix = "org.freedesktop.DBus.Error."

    private static let codesByName: [String: Code] = [
        "Failed": .failed, "NoReply": .noReply, "Timeout": .noReply, "TimedOut": .noReply,
        "ServiceUnknown": .serviceUnknown, "NameHasNoOwner": .nameHasNoOwner,
        "AccessDenied": .accessDenied, "AuthFailed": .accessDenied, "Disconnected": .disconnected,
        "NoServer": .connectionFailed, "BadAddress": .connectionFailed, "FileNotFound": .connectionFailed,
        "UnknownMethod": .unknownMethod, "UnknownObject": .unknownObject,
        "UnknownInterface": .unknownInterface, "UnknownProperty": .unknownProperty,
        "PropertyReadOnly": .propertyReadOnly, "InvalidArgs": .invalidArgs,
        "InvalidSignature": .invalidSignature, "NotSupported": .notSupported, "NoMemory": .noMemory,
        "LimitsExceeded": .limitsExceeded,
    ]

    static func code(forName name: String) -> Code {
        guard name.hasPrefix(prefix) else { return .failed }
        return codesByName[String(name.dropFirst(prefix.count))] ?? .failed
    }

    static func standardName(for code: Code) -> ErrorName {
        let suffix: String
        switch code {
        case .failed, .cancelled: suffix = "Failed"
        case .noReply: suffix = "NoReply"
        case .serviceUnknown: suffix = "ServiceUnknown"
        case .nameHasNoOwner: suffix = "NameHasNoOwner"
        case .accessDenied: suffix = "AccessDenied"
        case .disconnected: suffix = "Disconnected"
        case .connectionFailed: suffix = "NoServer"
        case .unknownMethod: suffix = "UnknownMethod"
        case .unknownObject: suffix = "UnknownObject"
        case .unknownInterface: suffix = "UnknownInterface"
        case .unknownProperty: suffix = "UnknownProperty"
        case .propertyReadOnly: suffix = "PropertyReadOnly"
        case .invalidArgs, .typeMismatch, .invalidName, .invalidValue: suffix = "InvalidArgs"
        case .invalidSignature: suffix = "InvalidSignature"
        case .notSupported: suffix = "NotSupported"
        case .noMemory: suffix = "NoMemory"
        case .limitsExceeded: suffix = "LimitsExceeded"
        }
        return ErrorName(unchecked: prefix + suffix)
    }

    /// An error named by a peer (an error reply) or by libdbus; names that are not valid error names
    /// become `Failed` with the bad name kept in the message.
    static func remote(name: String, message: String) -> DBusError {
        if let valid = try? ErrorName(name) { return DBusError(name: valid, message: message) }
        return DBusError(.failed, "\(name): \(message)")
    }

    static let closed = DBusError(.disconnected, "the connection is closed")
}

/// The one place where libdbus's `DBusError` out-parameter becomes a Swift error: runs `body` with
/// a fresh C error and throws if libdbus set it (or if `body` returned false/nil and it did not).
func withDBusError<R>(
    _ what: String, failureCode: DBusError.Code? = nil,
    _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> R?
) throws(DBusError) -> R {
    guard let cError = cdbus_error_new() else { throw DBusError(.noMemory, "\(what): out of memory") }
    defer { cdbus_error_free(cError) }
    let result = body(cError)
    if dbus_error_is_set(cError) != 0 {
        let name = cdbus_error_name(cError).map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let message = cdbus_error_message(cError).map { String(cString: $0) } ?? ""
        var error = DBusError.remote(name: name, message: "\(what): \(message)")
        if let failureCode, error.code == .failed { error.code = failureCode }
        throw error
    }
    guard let result else { throw DBusError(failureCode ?? .failed, "\(what) failed") }
    return result
}
