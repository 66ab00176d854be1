internal import CDBus
internal import CDBusShims

/// A received message: a method reply, an error reply, a signal or a method call.
public struct Message: Sendable {
    /// The four D-Bus message types.
    public enum Kind: Sendable, Hashable { case methodCall, methodReturn, error, signal }

    /// Which of the four types the message is.
    public var kind: Kind
    /// The sender's serial number of the message (never 0).
    public var serial: UInt32
    /// For a reply or error, the serial of the call it answers; 0 otherwise.
    public var replySerial: UInt32
    /// The sender's unique name (`:1.42`), as the bus stamps it; nil on a peer-to-peer connection.
    public var sender: BusName?
    /// The name it was sent to; nil for a broadcast signal.
    public var destination: BusName?
    /// The object called, or emitting the signal; nil for replies.
    public var path: ObjectPath?
    /// The interface of the method or signal; nil for replies (and optional in a call).
    public var interface: InterfaceName?
    /// The method or signal name; nil for replies.
    public var member: MemberName?
    /// An error reply's error name; nil for other messages.
    public var errorName: String?
    /// The body's signature; empty when there is no body.
    public var signature: Signature
    /// The arguments, decoded, in order.
    public var body: [Value]
    /// A method call whose caller wants no reply (NO_REPLY_EXPECTED): none is sent.
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
