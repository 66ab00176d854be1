import Synchronization

// The standard interfaces every exported object has, answered by the connection itself:
// Introspectable, Properties and (at object managers) ObjectManager. org.freedesktop.DBus.Peer
// never gets here: libdbus answers Ping and GetMachineId before the filter sees them.

extension Core {
    /// Introspect: any exported object, object manager, ancestor of one, or the root.
    func handleIntrospectable(_ message: Message, raw: OwnedMessage, member: String) {
        let path = message.path ?? .root
        guard member == "Introspect" else { return sendError(to: raw, unknownMethod(message)) }
        let xml = objects.withLock { tree -> String? in
            guard
                tree.objects[path] != nil || tree.managers.contains(path) || tree.hasDescendants(path)
                    || path == .root
            else { return nil }
            return introspect(tree, path)
        }
        guard let xml else { return sendError(to: raw, unknownObject(path)) }
        sendReply(to: raw, [.string(xml)])
    }

    /// GetManagedObjects: every object below an object manager.
    func handleObjectManager(_ message: Message, raw: OwnedMessage, member: String) {
        let path = message.path ?? .root
        guard member == "GetManagedObjects" else { return sendError(to: raw, unknownMethod(message)) }
        let result = objects.withLock { tree -> Value? in
            guard tree.managers.contains(path) else { return nil }
            let entries = tree.objects.filter { $0.key.isDescendant(of: path) }.sorted { $0.key < $1.key }
                .map {
                    DictEntry(
                        .objectPath($0.key),
                        $0.value.interfaceMap(standard: tree.listingStandard.contains(path)))
                }
            return .dictionary(
                key: .objectPath,
                value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                entries)
        }
        guard let result else { return sendError(to: raw, unknownInterface(path, .objectManager)) }
        sendReply(to: raw, [result])
    }

    /// Get, GetAll and Set on the stored property values (Set through the property's setter).
    func handleProperties(_ message: Message, raw: OwnedMessage, member: String) {
        let path = message.path ?? .root
        let args = message.body
        func interfaceArg() -> InterfaceName? {
            guard case .string(let text)? = args.first else { return nil }
            return try? InterfaceName(text)
        }
        switch (member, message.signature.rawValue) {
        case ("Get", "ss"):
            guard case .string(let name) = args[1], let iface = interfaceArg() else {
                return sendError(to: raw, DBusError(.invalidArgs, "invalid interface name"))
            }
            let result = objects.withLock { tree -> Result<Value, DBusError> in
                guard let object = tree.objects[path] else { return .failure(unknownObject(path)) }
                guard let entry = object.interfaces[iface] else {
                    return .failure(unknownInterface(path, iface))
                }
                guard let property = entry.spec.properties[name], property.access != .write,
                    let value = entry.values[name]
                else { return .failure(DBusError(.invalidArgs, "No such property '\(name)'")) }
                return .success(value)
            }
            switch result {
            case .success(let value): sendReply(to: raw, [.variant(value)])
            case .failure(let error): sendError(to: raw, error)
            }
        case ("GetAll", "s"):
            guard let iface = interfaceArg() else {
                return sendError(to: raw, DBusError(.invalidArgs, "invalid interface name"))
            }
            let result = objects.withLock { tree -> Result<Value, DBusError> in
                guard let object = tree.objects[path] else { return .failure(unknownObject(path)) }
                guard object.interfaces[iface] != nil else { return .failure(unknownInterface(path, iface)) }
                return .success(object.propertyMap(iface))
            }
            switch result {
            case .success(let value): sendReply(to: raw, [value])
            case .failure(let error): sendError(to: raw, error)
            }
        case ("Set", "ssv"):
            guard case .string(let name) = args[1], case .variant(let value) = args[2],
                let iface = interfaceArg()
            else { return sendError(to: raw, DBusError(.invalidArgs, "invalid interface name")) }
            let found = objects.withLock { tree -> Result<Property, DBusError> in
                guard let object = tree.objects[path] else { return .failure(unknownObject(path)) }
                guard let entry = object.interfaces[iface] else {
                    return .failure(unknownInterface(path, iface))
                }
                guard let property = entry.spec.properties[name] else {
                    return .failure(DBusError(.invalidArgs, "No such property '\(name)'"))
                }
                guard property.access != .read else {
                    return .failure(DBusError(.propertyReadOnly, "Property '\(name)' is read-only"))
                }
                guard value.type == property.type else {
                    return .failure(
                        DBusError(
                            .invalidSignature,
                            "Property '\(name)' has type '\(property.type)', got '\(value.type)'"))
                }
                return .success(property)
            }
            switch found {
            case .failure(let error):
                sendError(to: raw, error)
            case .success(let property):
                let call = MethodCall(message: message, raw: raw)
                runHandler(call, output: .empty) { [self] call in
                    let stored = try await property.setter?(value, call) ?? value
                    try storeSetProperty(path, iface, property, stored)
                    return []
                }
            }
        case ("Get", _), ("GetAll", _), ("Set", _):
            sendError(
                to: raw,
                DBusError(.invalidArgs, "\(member) got arguments of type '\(message.signature)'"))
        default:
            sendError(to: raw, unknownMethod(message))
        }
    }

    /// Stores a value set remotely and emits PropertiesChanged if it changed.
    private func storeSetProperty(
        _ path: ObjectPath, _ interface: InterfaceName, _ property: Property, _ value: Value
    ) throws(DBusError) {
        guard value.type == property.type else {
            throw DBusError(.failed, "the setter of '\(property.name)' returned a '\(value.type)'")
        }
        try objects.withLock { (tree) throws(DBusError) in
            guard var object = tree.objects[path], var entry = object.interfaces[interface] else {
                throw DBusError(.unknownObject, "no interface \(interface) exported at \(path)")
            }
            let old = entry.values[property.name.rawValue]
            entry.values[property.name.rawValue] = value
            object.interfaces[interface] = entry
            tree.objects[path] = object
            guard old != value else { return }
            switch property.changes {
            case .emitsValue: try queuePropertiesChanged(path, interface, [property.name.rawValue: value], [])
            case .invalidates: try queuePropertiesChanged(path, interface, [:], [property.name.rawValue])
            case .constant, .none: break
            }
        }
    }
}
