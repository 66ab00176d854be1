internal import CDBus
internal import CDBusShims

// Incoming method calls on exported objects (loop thread): finding the method, checking its
// arguments, running its handler and sending the reply. The standard interfaces are answered in
// StandardInterfaces.swift.

extension Core {
    func sendReply(to call: OwnedMessage, _ values: [Value]) {
        guard dbus_message_get_no_reply(call.pointer) == 0 else { return }
        do {
            guard let pointer = dbus_message_new_method_return(call.pointer) else { return }
            let reply = OwnedMessage(adopting: pointer)
            try Encoder.append(values, to: pointer)
            try send(reply)
        } catch {
            sendError(to: call, DBusError(.failed, "cannot send the reply: \(error.message)"))
        }
    }

    static func makeError(to call: OwnedMessage, _ error: DBusError) -> OwnedMessage? {
        let text = String(error.message.unicodeScalars.filter { $0 != "\0" })
        guard let pointer = dbus_message_new_error(call.pointer, error.name.rawValue, text) else {
            return nil
        }
        return OwnedMessage(adopting: pointer)
    }

    func sendError(to call: OwnedMessage, _ error: DBusError) {
        guard dbus_message_get_no_reply(call.pointer) == 0, let reply = Core.makeError(to: call, error) else {
            return
        }
        try? send(reply)
    }

    /// Runs an async handler and sends its reply (or error) after everything the handler sent
    /// before returning.
    func runHandler(
        _ call: MethodCall, output: Signature?,
        _ body: @escaping @Sendable (MethodCall) async throws -> [Value]
    ) {
        // Started immediately on the loop thread: a handler that does not suspend runs to completion
        // here, without a thread hop; one that suspends continues on the global executor.
        Task.immediate { [self] in
            var reply: OwnedMessage? = nil
            let wantsReply = !call.message.noReplyExpected
            do {
                let values = try await body(call)
                if wantsReply {
                    if let output,
                        Signature(validatedTypes: values.map(\.type), rawValue: "").types != output.types
                    {
                        let got = (try? Signature(values.map(\.type)).rawValue) ?? "?"
                        throw DBusError(
                            .failed, "\(call.member) returned values of type '\(got)' instead of '\(output)'")
                    }
                    guard let pointer = dbus_message_new_method_return(call.raw.pointer) else {
                        throw DBusError(.noMemory, "out of memory")
                    }
                    reply = OwnedMessage(adopting: pointer)
                    if let reply { try Encoder.append(values, to: reply.pointer) }
                }
            } catch {
                let dbusError = (error as? DBusError) ?? DBusError(.failed, String(describing: error))
                reply = wantsReply ? Core.makeError(to: call.raw, dbusError) : nil
            }
            if let reply { try? send(reply) }
            for action in call.takeActions() { action() }
        }
    }

    func dispatchMethodCall(_ pointer: OpaquePointer) {
        assertOnLoopThread()
        let raw = OwnedMessage(retaining: pointer)
        let message: Message
        do {
            message = try Message(pointer, cache: &cache)
        } catch {
            sendError(to: raw, DBusError(.invalidArgs, error.message))
            return
        }
        let path = message.path ?? .root
        let member = message.member?.rawValue ?? ""
        let interface = message.interface

        switch interface {
        case InterfaceName.introspectable?:
            return handleIntrospectable(message, raw: raw, member: member)
        case InterfaceName.properties?:
            return handleProperties(message, raw: raw, member: member)
        case InterfaceName.objectManager?:
            return handleObjectManager(message, raw: raw, member: member)
        default:
            break
        }

        let found = objects.withLock { tree -> Result<Method, DBusError> in
            guard let object = tree.objects[path] else { return .failure(unknownObject(path)) }
            if let interface {
                guard let entry = object.interfaces[interface] else {
                    return .failure(unknownInterface(path, interface))
                }
                guard let method = entry.spec.methods[MemberName(unchecked: member)] else {
                    return .failure(unknownMethod(message))
                }
                return .success(method)
            }
            for name in object.order {
                if let method = object.interfaces[name]?.spec.methods[MemberName(unchecked: member)] {
                    return .success(method)
                }
            }
            return .failure(unknownMethod(message))
        }
        switch found {
        case .failure(let error):
            sendError(to: raw, error)
        case .success(let method):
            if let input = method.input, message.signature.types != input.types {
                return sendError(
                    to: raw,
                    DBusError(
                        .invalidArgs,
                        "\(method.name) expects arguments of type '\(input)', got '\(message.signature)'"))
            }
            runHandler(MethodCall(message: message, raw: raw), output: method.output, method.handler)
        }
    }

    func unknownObject(_ path: ObjectPath) -> DBusError {
        DBusError(.unknownObject, "no object at path \(path)")
    }

    func unknownInterface(_ path: ObjectPath, _ interface: InterfaceName) -> DBusError {
        DBusError(.unknownInterface, "object \(path) has no interface \(interface)")
    }

    func unknownMethod(_ message: Message) -> DBusError {
        DBusError(
            .unknownMethod,
            "no method \(message.member?.rawValue ?? "?") with signature '\(message.signature)' on interface "
                + "\(message.interface?.rawValue ?? "(any)") at \(message.path?.rawValue ?? "?")")
    }
}
