/// A PropertiesChanged signal, decoded.
public struct PropertiesChanged: Sendable {
    /// The unique name of the connection that emitted it; nil when the message had none.
    public var sender: BusName?
    /// The object whose properties changed.
    public var path: ObjectPath
    /// The interface the properties belong to (`org.bluez.GattCharacteristic1`).
    public var interface: String
    /// The new values by property name, unwrapped from their variants.
    public var changed: [String: Value]
    /// Properties that changed without their new value being sent (Get them to know it).
    public var invalidated: [String]

    /// A signal's content as given: one a client makes up itself (devices gone with bluetoothd).
    public init(
        sender: BusName? = nil, path: ObjectPath, interface: String, changed: [String: Value],
        invalidated: [String]
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.changed = changed
        self.invalidated = invalidated
    }

    /// Decodes a PropertiesChanged signal; throws `.typeMismatch` if it has another shape.
    public init(_ message: Message) throws(DBusError) {
        guard message.member?.rawValue == "PropertiesChanged", message.interface == .properties else {
            throw DBusError(.typeMismatch, "not a PropertiesChanged signal")
        }
        (interface, changed, invalidated) = try message.decode(
            String.self, [String: Value].self, [String].self)
        sender = message.sender
        path = message.path ?? .root
    }
}

/// An ObjectManager signal, decoded.
public enum ObjectManagerEvent: Sendable {
    /// An object gained interfaces (a new object, usually), with their properties.
    case interfacesAdded(path: ObjectPath, interfaces: [String: [String: Value]])
    /// An object lost interfaces; when it has none left it is gone.
    case interfacesRemoved(path: ObjectPath, interfaces: [String])

    /// Decodes an InterfacesAdded or InterfacesRemoved signal; throws `.typeMismatch` for any other
    /// message or shape.
    public init(_ message: Message) throws(DBusError) {
        guard message.interface == .objectManager else {
            throw DBusError(.typeMismatch, "not an ObjectManager signal")
        }
        switch message.member?.rawValue {
        case "InterfacesAdded":
            guard message.signature.rawValue == "oa{sa{sv}}", case .objectPath(let path) = message.body[0]
            else {
                throw DBusError(
                    .typeMismatch,
                    "InterfacesAdded has signature '\(message.signature)', expected 'oa{sa{sv}}'")
            }
            self = .interfacesAdded(path: path, interfaces: try message.body[1].interfaceMap())
        case "InterfacesRemoved":
            let (path, names) = try message.decode(ObjectPath.self, [String].self)
            self = .interfacesRemoved(path: path, interfaces: names)
        default:
            throw DBusError(.typeMismatch, "not an ObjectManager signal")
        }
    }
}

/// What a client of an object tree (such as BlueZ's) receives, in bus order.
public enum ObjectEvent: Sendable {
    /// Properties of an object changed.
    case propertiesChanged(PropertiesChanged)
    /// An object gained interfaces, with their properties.
    case interfacesAdded(path: ObjectPath, interfaces: [String: [String: Value]])
    /// An object lost interfaces; when it has none left it is gone.
    case interfacesRemoved(path: ObjectPath, interfaces: [String])

    /// Decodes a PropertiesChanged, InterfacesAdded or InterfacesRemoved signal.
    public init(_ message: Message) throws(DBusError) {
        if message.interface == .properties {
            self = .propertiesChanged(try PropertiesChanged(message))
        } else {
            switch try ObjectManagerEvent(message) {
            case .interfacesAdded(let path, let interfaces):
                self = .interfacesAdded(path: path, interfaces: interfaces)
            case .interfacesRemoved(let path, let interfaces):
                self = .interfacesRemoved(path: path, interfaces: interfaces)
            }
        }
    }
}

// MARK: - Properties and ObjectManager clients

extension Connection {
    /// `org.freedesktop.DBus.Properties.Get`, the variant unwrapped.
    public func getProperty(
        _ name: String, interface: InterfaceName, path: ObjectPath, destination: BusName,
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> Value {
        let reply = try await call(
            destination: destination, path: path, interface: .properties, member: "Get",
            body: [.string(interface.rawValue), .string(name)], timeout: timeout)
        guard reply.signature.rawValue == "v", case .variant(let value) = reply.body[0] else {
            throw DBusError(.typeMismatch, "Get returned '\(reply.signature)', expected 'v'")
        }
        return value
    }

    /// `org.freedesktop.DBus.Properties.GetAll`.
    public func getAllProperties(
        interface: InterfaceName, path: ObjectPath, destination: BusName, timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [String: Value] {
        let reply = try await call(
            destination: destination, path: path, interface: .properties, member: "GetAll",
            body: [.string(interface.rawValue)], timeout: timeout)
        try reply.expectSignature("a{sv}")
        return try reply.body[0].propertyMap()
    }

    /// `org.freedesktop.DBus.Properties.Set` (the value is wrapped in a variant).
    public func setProperty(
        _ name: String, to value: Value, interface: InterfaceName, path: ObjectPath, destination: BusName,
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) {
        _ = try await call(
            destination: destination, path: path, interface: .properties, member: "Set",
            body: [.string(interface.rawValue), .string(name), .variant(value)], timeout: timeout)
    }

    /// `org.freedesktop.DBus.ObjectManager.GetManagedObjects`.
    public func managedObjects(
        destination: BusName, path: ObjectPath = .root, timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [ObjectPath: [String: [String: Value]]] {
        let reply = try await call(
            destination: destination, path: path, interface: .objectManager, member: "GetManagedObjects",
            timeout: timeout)
        try reply.expectSignature("a{oa{sa{sv}}}")
        guard let objects = reply.body.first else {
            throw DBusError(.typeMismatch, "GetManagedObjects replied with nothing")
        }
        return try objects.managedObjects()
    }

    /// PropertiesChanged signals from `sender` at `path` (or under `pathNamespace`), optionally for
    /// one interface only (matched with arg0 on the bus). Malformed signals are dropped. Numbered
    /// and bounded as `signals(matching:keeping:)`.
    public func propertiesChanged(
        sender: BusName?, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
        interface: InterfaceName? = nil, keeping: Int = Connection.signalCapacity
    ) async throws(DBusError) -> AsyncStream<Sequenced<PropertiesChanged>> {
        let rule = MatchRule(
            sender: sender, path: path, pathNamespace: pathNamespace, interface: .properties,
            member: "PropertiesChanged", arg0: interface?.rawValue)
        return try await subscribe([rule], keeping: keeping) { try? PropertiesChanged($0) }
    }

    /// InterfacesAdded and InterfacesRemoved from the object manager at `managerPath`, numbered and
    /// bounded as `signals(matching:keeping:)`.
    public func objectManagerEvents(
        sender: BusName?, managerPath: ObjectPath = .root, keeping: Int = Connection.signalCapacity
    ) async throws(DBusError) -> AsyncStream<Sequenced<ObjectManagerEvent>> {
        let rule = MatchRule(sender: sender, path: managerPath, interface: .objectManager)
        return try await subscribe([rule], keeping: keeping) { try? ObjectManagerEvent($0) }
    }

    /// Everything a client mirroring an object tree needs, in one stream in bus order:
    /// PropertiesChanged under `pathNamespace` and InterfacesAdded/Removed from `managerPath`.
    /// Subscribe first, then call `managedObjects`, and nothing is missed while the consumer keeps
    /// up; numbered and bounded as `signals(matching:keeping:)`, so a consumer that sees a gap
    /// calls `managedObjects` again.
    public func objectEvents(
        sender: BusName?, pathNamespace: ObjectPath, managerPath: ObjectPath = .root,
        keeping: Int = Connection.signalCapacity
    ) async throws(DBusError) -> AsyncStream<Sequenced<ObjectEvent>> {
        let rules = [
            MatchRule(
                sender: sender, path: managerPath, interface: .objectManager, member: "InterfacesAdded"),
            MatchRule(
                sender: sender, path: managerPath, interface: .objectManager, member: "InterfacesRemoved"),
            MatchRule(
                sender: sender, pathNamespace: pathNamespace, interface: .properties,
                member: "PropertiesChanged"),
        ]
        return try await subscribe(rules, keeping: keeping) { try? ObjectEvent($0) }
    }
}
