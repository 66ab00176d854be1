internal import CDBus
internal import CDBusShims
internal import Glibc

// Routing of incoming messages (loop thread, from the libdbus filter installed by `run`): replies
// to the calls waiting for them, signals to the signal streams, method calls to exported objects.

extension Core {
    /// What the filter does with each message libdbus dispatches.
    func handle(_ message: OpaquePointer) -> DBusHandlerResult {
        assertOnLoopThread()
        switch Int32(dbus_message_get_type(message)) {
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_RETURN), Int32(CDBUS_MESSAGE_TYPE_ERROR):
            completeCall(reply: message)
            return DBUS_HANDLER_RESULT_HANDLED
        case Int32(CDBUS_MESSAGE_TYPE_SIGNAL):
            if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                shutdown(DBusError(.disconnected, "the bus closed the connection"))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            dispatchSignal(message)
            return DBUS_HANDLER_RESULT_HANDLED
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_CALL):
            dispatchMethodCall(message)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }

    /// Delivers a signal to every stream with a matching rule, and follows NameOwnerChanged for the
    /// well-known senders that rules name.
    func dispatchSignal(_ message: OpaquePointer) {
        assertOnLoopThread()
        // Header fields stay C strings: matching compares bytes, and Swift strings are only made
        // for signals some stream wants.
        let sender = dbus_message_get_sender(message)
        let path = dbus_message_get_path(message)
        let interface = dbus_message_get_interface(message)
        let member = dbus_message_get_member(message)

        if !owners.isEmpty && same(sender, BusName.bus.rawValue) && same(member, "NameOwnerChanged")
            && same(interface, InterfaceName.bus.rawValue)
        {
            if let body = try? Decoder.body(of: message, cache: &cache), body.count == 3,
                case .string(let name) = body[0], case .string(let newOwner) = body[2], owners[name] != nil
            {
                owners[name]?.owner = newOwner.isEmpty ? nil : newOwner
            }
        }
        if subscriptions.isEmpty { return }

        var arg0: String?? = nil
        var decoded: Message? = nil
        var failed = false
        for (_, subscription) in subscriptions {
            var matched = false
            for rule in subscription.rules {
                if let want = rule.sender {
                    if want.isUnique || want == .bus {
                        if !same(sender, want.rawValue) { continue }
                    } else {
                        guard let owner = owners[want.rawValue]?.owner, same(sender, owner) else { continue }
                    }
                }
                if let want = rule.path, !same(path, want.rawValue) { continue }
                if let want = rule.pathNamespace, want != .root {
                    guard let path, inNamespace(path, want.rawValue) else { continue }
                }
                if let want = rule.interface, !same(interface, want.rawValue) { continue }
                if let want = rule.member, !same(member, want.rawValue) { continue }
                if let want = rule.arg0 {
                    if arg0 == nil { arg0 = .some(Decoder.firstString(of: message)) }
                    if arg0 != .some(want) { continue }
                }
                matched = true
                break
            }
            guard matched else { continue }
            if decoded == nil && !failed {
                do {
                    decoded = try Message(message, cache: &cache)
                } catch {
                    failed = true  // libdbus validated it; nothing sensible to deliver
                }
            }
            if let decoded { subscription.deliver(decoded) }
        }
    }
}

/// Whether a C string from a message header equals `text`.
@inline(__always)
private func same(_ c: UnsafePointer<CChar>?, _ text: String) -> Bool {
    guard let c else { return false }
    var text = text
    return text.withUTF8 { utf8 in
        guard strlen(c) == utf8.count else { return false }
        guard let base = utf8.baseAddress else { return true }
        return memcmp(c, base, utf8.count) == 0
    }
}

/// `path_namespace` on a C string: `path` is `namespace` or lies below it.
private func inNamespace(_ path: UnsafePointer<CChar>, _ namespace: String) -> Bool {
    var namespace = namespace
    return namespace.withUTF8 { ns in
        let length = strlen(path)
        guard let base = ns.baseAddress, length >= ns.count, memcmp(path, base, ns.count) == 0 else {
            return false
        }
        return length == ns.count || path[ns.count] == 0x2F
    }
}
