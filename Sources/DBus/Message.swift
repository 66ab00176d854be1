internal import CDBus
internal import CDBusShims

/// A received message: a method reply, an error reply, a signal or a method call.
public struct Message: Sendable {
    public enum Kind: Sendable, Hashable { case methodCall, methodReturn, error, signal }

    public var kind: Kind
    public var serial: UInt32
    public var replySerial: UInt32
    public var sender: BusName?
    public var destination: BusName?
    public var path: ObjectPath?
    public var interface: InterfaceName?
    public var member: MemberName?
    public var errorName: String?
    public var signature: Signature
    public var body: [Value]
    public var noReplyExpected: Bool

    /// Reads a message libdbus has received (and therefore validated).
    init(_ m: OpaquePointer, cache: inout SignatureCache) throws(DBusError) {
        switch Int32(dbus_message_get_type(m)) {
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_CALL): kind = .methodCall
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_RETURN): kind = .methodReturn
        case Int32(CDBUS_MESSAGE_TYPE_ERROR): kind = .error
        default: kind = .signal
        }
        serial = dbus_message_get_serial(m)
        replySerial = dbus_message_get_reply_serial(m)
        sender = dbus_message_get_sender(m).map { BusName(unchecked: String(cString: $0)) }
        destination = dbus_message_get_destination(m).map { BusName(unchecked: String(cString: $0)) }
        path = dbus_message_get_path(m).map { ObjectPath(unchecked: String(cString: $0)) }
        interface = dbus_message_get_interface(m).map { InterfaceName(unchecked: String(cString: $0)) }
        member = dbus_message_get_member(m).map { MemberName(unchecked: String(cString: $0)) }
        errorName = dbus_message_get_error_name(m).map { String(cString: $0) }
        let text = dbus_message_get_signature(m).map { String(cString: $0) } ?? ""
        signature = Signature(validatedTypes: try cache.types(text), rawValue: text)
        body = try Decoder.body(of: m, cache: &cache)
        noReplyExpected = dbus_message_get_no_reply(m) != 0
    }

    /// The error an error reply stands for.
    var error: DBusError {
        var text = ""
        if case .string(let s)? = body.first { text = s }
        return DBusError.remote(name: errorName ?? "org.freedesktop.DBus.Error.Failed", message: text)
    }

    /// Throws `.typeMismatch` unless the body's signature is `expected`.
    public func expectSignature(_ expected: Signature) throws(DBusError) {
        guard signature == expected else {
            throw DBusError(
                .typeMismatch,
                "\(describe) has signature '\(signature)', expected '\(expected)'")
        }
    }

    /// The body decoded as the given types, e.g. `try reply.decode(UnixFD.self, UInt16.self)`;
    /// throws `.typeMismatch` saying which argument was wrong.
    public func decode<each T: DBusValueConvertible>(_ types: repeat (each T).Type) throws(DBusError) -> (
        repeat each T
    ) {
        var count = 0
        for _ in repeat (each types) { count += 1 }
        guard count == body.count else {
            throw DBusError(
                .typeMismatch, "\(describe) has \(body.count) argument(s) ('\(signature)'), expected \(count)"
            )
        }
        var index = 0
        func next<U: DBusValueConvertible>(_ type: U.Type) throws(DBusError) -> U {
            defer { index += 1 }
            do {
                return try U(dbusValue: body[index])
            } catch {
                throw DBusError(.typeMismatch, "\(describe), argument \(index): \(error.message)")
            }
        }
        return (repeat try next(each types))
    }

    private var describe: String {
        switch kind {
        case .methodReturn: "reply"
        case .error: "error reply"
        case .signal: "signal \(interface?.rawValue ?? "?").\(member?.rawValue ?? "?")"
        case .methodCall: "call \(interface?.rawValue ?? "?").\(member?.rawValue ?? "?")"
        }
    }
}
