internal import CDBus
internal import CDBusShims
import Synchronization

/// An incoming method call, as an exported method's handler sees it.
public final class MethodCall: Sendable {
    public let message: Message
    let raw: OwnedMessage
    private let actions = Mutex<[@Sendable () -> Void]>([])

    init(message: Message, raw: OwnedMessage) {
        self.message = message
        self.raw = raw
    }

    /// The caller's unique name.
    public var sender: BusName? { message.sender }
    public var path: ObjectPath { message.path ?? .root }
    public var interface: InterfaceName? { message.interface }
    public var member: MemberName { message.member ?? MemberName(unchecked: "Unknown") }
    public var body: [Value] { message.body }

    /// The arguments decoded as the given types (throws `.typeMismatch`, which becomes InvalidArgs).
    public func decode<each T: DBusValueConvertible>(_ types: repeat (each T).Type) throws(DBusError) -> (
        repeat each T
    ) {
        do {
            return try message.decode(repeat each types)
        } catch {
            throw DBusError(.invalidArgs, error.message)
        }
    }

    /// Runs `action` right after the reply has been queued: whatever it sends goes out after the
    /// reply (the handler's own sends before returning go out before it).
    public func afterReply(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    func takeActions() -> [@Sendable () -> Void] {
        actions.withLock { list in
            defer { list = [] }
            return list
        }
    }
}

/// An exported method.
public struct Method: Sendable {
    public typealias Handler = @Sendable (MethodCall) async throws -> [Value]
    public var name: MemberName
    /// nil accepts any arguments.
    public var input: Signature?
    /// nil allows any return values.
    public var output: Signature?
    public var inputNames: [String]
    public var outputNames: [String]
    public var handler: Handler

    /// Calls whose signature is not `input` get InvalidArgs without reaching `handler`; the
    /// handler's return values must have the signature `output` (else the caller gets Failed).
    /// Throw a `DBusError(name:message:)` to reply with that error.
    public init(
        _ name: MemberName, input: Signature? = .empty, output: Signature? = .empty,
        inputNames: [String] = [], outputNames: [String] = [], handler: @escaping Handler
    ) {
        self.name = name
        self.input = input
        self.output = output
        self.inputNames = inputNames
        self.outputNames = outputNames
        self.handler = handler
    }
}

/// An exported property. Values are stored by the connection: set them with
/// `Connection.setProperties`; remote `Set` calls go through `setter` if there is one.
public struct Property: Sendable {
    public enum Access: String, Sendable { case read, write, readWrite = "readwrite" }
    /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
    public enum Changes: String, Sendable {
        /// PropertiesChanged carries the new value.
        case emitsValue = "true"
        /// PropertiesChanged lists the name as invalidated.
        case invalidates
        /// Never changes.
        case constant = "const"
        /// Changes are not signalled.
        case none = "false"
    }
    /// Validates (and may transform) a value set by a remote `Set`; throw a `DBusError` to refuse.
    public typealias Setter = @Sendable (Value, MethodCall) async throws -> Value

    public var name: MemberName
    public var type: DBusType
    public var access: Access
    public var changes: Changes
    public var setter: Setter?

    public init(
        _ name: MemberName, type: DBusType, access: Access = .read, changes: Changes = .emitsValue,
        setter: Setter? = nil
    ) {
        self.name = name
        self.type = type
        self.access = access
        self.changes = changes
        self.setter = setter
    }
}

/// A signal an interface declares (for introspection).
public struct SignalSpec: Sendable {
    public var name: MemberName
    public var signature: Signature
    public var argNames: [String]
    public init(_ name: MemberName, signature: Signature = .empty, argNames: [String] = []) {
        self.name = name
        self.signature = signature
        self.argNames = argNames
    }
}

/// An interface to export: its methods, properties and signals.
public struct Interface: Sendable {
    public let name: InterfaceName
    public let methods: [MemberName: Method]
    public let properties: [String: Property]
    public let signals: [SignalSpec]

    public init(
        _ name: InterfaceName, methods: [Method] = [], properties: [Property] = [], signals: [SignalSpec] = []
    ) {
        self.name = name
        var m: [MemberName: Method] = [:]
        for method in methods { m[method.name] = method }
        self.methods = m
        var p: [String: Property] = [:]
        for property in properties { p[property.name.rawValue] = property }
        self.properties = p
        self.signals = signals
    }
}

/// An interface with its initial property values, for `Connection.export`.
public struct ExportedInterface: Sendable {
    public var interface: Interface
    public var properties: [String: Value]
    public init(_ interface: Interface, properties: [String: Value] = [:]) {
        self.interface = interface
        self.properties = properties
    }
}

// MARK: - The object tree

struct ExportedObject {
    var order: [InterfaceName] = []
    var interfaces: [InterfaceName: (spec: Interface, values: [String: Value])] = [:]

    /// The readable, present properties of `name` as an `a{sv}`.
    func propertyMap(_ name: InterfaceName) -> Value {
        guard let entry = interfaces[name] else { return .propertyMap([:]) }
        var map: [String: Value] = [:]
        for (key, value) in entry.values where entry.spec.properties[key]?.access != .write {
            map[key] = value
        }
        return .propertyMap(map)
    }

    /// `a{sa{sv}}` of all interfaces.
    /// `standard`: list Introspectable first and Properties last, with empty property maps.
    func interfaceMap(only names: [InterfaceName]? = nil, standard: Bool = false) -> Value {
        let empty = Value.dictionary(key: .string, value: .variant, [])
        var entries = (names ?? order).map { DictEntry(.string($0.rawValue), propertyMap($0)) }
        if standard {
            entries.insert(DictEntry(.string(InterfaceName.introspectable.rawValue), empty), at: 0)
            entries.append(DictEntry(.string(InterfaceName.properties.rawValue), empty))
        }
        return .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), entries)
    }
}

struct ObjectTree: Sendable {
    var objects: [ObjectPath: ExportedObject] = [:]
    var managers: Set<ObjectPath> = []
    /// Managers that list the standard interfaces with each object (see `addObjectManager`).
    var listingStandard: Set<ObjectPath> = []

    /// The closest object manager strictly above `path`.
    func manager(for path: ObjectPath) -> ObjectPath? {
        var current = path.parent
        while let p = current {
            if managers.contains(p) { return p }
            current = p.parent
        }
        return nil
    }

    func hasDescendants(_ path: ObjectPath) -> Bool {
        objects.keys.contains { $0.isDescendant(of: path) } || managers.contains { $0.isDescendant(of: path) }
    }

    func children(of path: ObjectPath) -> [String] {
        var names = Set<String>()
        let prefixCount = path == .root ? 1 : path.rawValue.utf8.count + 1
        for p in Array(objects.keys) + Array(managers) where p.isDescendant(of: path) {
            let rest = p.rawValue.utf8.dropFirst(prefixCount)
            let element = rest.split(separator: UInt8(ascii: "/"), maxSplits: 1).first.map {
                String(decoding: $0, as: UTF8.self)
            }
            if let element { names.insert(element) }
        }
        return names.sorted()
    }
}

// MARK: - Public serving API

extension Connection {
    /// Exports interfaces at `path` (replacing interfaces of the same name there). If an object
    /// manager lies above `path`, it emits InterfacesAdded for the new interfaces.
    public func export(_ interfaces: [ExportedInterface], at path: ObjectPath) throws(DBusError) {
        for exported in interfaces {
            let reserved: Set<InterfaceName> = [.properties, .introspectable, .peer, .objectManager]
            guard !reserved.contains(exported.interface.name) else {
                throw DBusError(
                    .invalidArgs, "\(exported.interface.name) is provided by the connection itself")
            }
            try Connection.check(exported.properties, against: exported.interface)
        }
        let core = self.core
        try core.objects.withLock { (tree) throws(DBusError) in
            guard core.isOpen.load(ordering: .acquiring) else { throw DBusError.closed }
            let isNew = tree.objects[path] == nil
            var object = tree.objects[path] ?? ExportedObject()
            for exported in interfaces {
                if object.interfaces[exported.interface.name] == nil {
                    object.order.append(exported.interface.name)
                }
                object.interfaces[exported.interface.name] = (exported.interface, exported.properties)
            }
            tree.objects[path] = object
            if let manager = tree.manager(for: path), !interfaces.isEmpty {
                let signal = try Connection.makeSignal(
                    path: manager, interface: .objectManager, member: "InterfacesAdded",
                    body: [
                        .objectPath(path),
                        object.interfaceMap(
                            only: interfaces.map(\.interface.name),
                            standard: isNew && tree.listingStandard.contains(manager)),
                    ],
                    destination: nil)
                try? core.send(signal)
            }
        }
    }

    /// Exports one interface at `path`.
    public func export(_ interface: Interface, at path: ObjectPath, properties: [String: Value] = [:])
        throws(DBusError)
    {
        try export([ExportedInterface(interface, properties: properties)], at: path)
    }

    /// Removes interfaces from `path` (all of them if `interfaces` is nil), emitting
    /// InterfacesRemoved from the object manager above it, if any.
    public func unexport(_ interfaces: [InterfaceName]? = nil, at path: ObjectPath) {
        let core = self.core
        core.objects.withLock { tree in
            guard var object = tree.objects[path] else { return }
            let removing = (interfaces ?? object.order).filter { object.interfaces[$0] != nil }
            guard !removing.isEmpty else { return }
            for name in removing { object.interfaces[name] = nil }
            object.order.removeAll { !object.interfaces.keys.contains($0) }
            tree.objects[path] = object.order.isEmpty ? nil : object
            if let manager = tree.manager(for: path), core.isOpen.load(ordering: .acquiring),
                let signal = try? Connection.makeSignal(
                    path: manager, interface: .objectManager, member: "InterfacesRemoved",
                    body: [.objectPath(path), .strings(removing.map(\.rawValue))], destination: nil)
            {
                try? core.send(signal)
            }
        }
    }

    /// Makes `path` an object manager: it answers GetManagedObjects for everything below it and
    /// emits InterfacesAdded/InterfacesRemoved as objects below it are exported and unexported.
    /// `listingStandardInterfaces`: each object also shows `org.freedesktop.DBus.Introspectable`
    /// and `org.freedesktop.DBus.Properties` with empty maps, in GetManagedObjects and in the
    /// InterfacesAdded that brings a new object, as services built on GLib's or BlueZ's D-Bus
    /// helpers do (bluetoothd among them).
    public func addObjectManager(at path: ObjectPath, listingStandardInterfaces: Bool = false) {
        core.objects.withLock {
            $0.managers.insert(path)
            if listingStandardInterfaces { $0.listingStandard.insert(path) }
        }
    }

    public func removeObjectManager(at path: ObjectPath) {
        core.objects.withLock {
            $0.managers.remove(path)
            $0.listingStandard.remove(path)
        }
    }

    /// Changes property values of an exported interface and emits one PropertiesChanged for them
    /// (values as the properties' `changes` say; nil removes a value, listed as invalidated). The
    /// signal is queued before anything sent later, e.g. the reply of the method being handled.
    public func setProperties(
        _ changes: [String: Value?], interface: InterfaceName, at path: ObjectPath
    ) throws(DBusError) {
        let core = self.core
        try core.objects.withLock { (tree) throws(DBusError) in
            guard var object = tree.objects[path], var entry = object.interfaces[interface] else {
                throw DBusError(.unknownObject, "no interface \(interface) exported at \(path)")
            }
            var changed: [String: Value] = [:]
            var invalidated: [String] = []
            for (name, value) in changes {
                guard let property = entry.spec.properties[name] else {
                    throw DBusError(.unknownProperty, "interface \(interface) has no property '\(name)'")
                }
                if let value, value.type != property.type {
                    throw DBusError(
                        .typeMismatch, "property '\(name)' has type '\(property.type)', got '\(value.type)'")
                }
            }
            for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
                guard let property = entry.spec.properties[name] else { continue }
                entry.values[name] = value
                switch (property.changes, value) {
                case (.emitsValue, let value?): changed[name] = value
                case (.emitsValue, nil), (.invalidates, _): invalidated.append(name)
                case (.constant, _), (.none, _): break
                }
            }
            object.interfaces[interface] = entry
            tree.objects[path] = object
            guard !changed.isEmpty || !invalidated.isEmpty else { return }
            try core.queuePropertiesChanged(path, interface, changed, invalidated)
        }
    }

    /// Sets one property (see `setProperties`).
    public func setProperty(_ name: String, to value: Value?, interface: InterfaceName, at path: ObjectPath)
        throws(DBusError)
    {
        try setProperties([name: value], interface: interface, at: path)
    }

    /// The stored value of an exported property (nil if absent or not exported).
    public func property(_ name: String, interface: InterfaceName, at path: ObjectPath) -> Value? {
        core.objects.withLock { $0.objects[path]?.interfaces[interface]?.values[name] }
    }

    /// Whether anything is exported at `path`.
    public func isExported(_ path: ObjectPath, interface: InterfaceName? = nil) -> Bool {
        core.objects.withLock { tree in
            guard let object = tree.objects[path] else { return false }
            return interface.map { object.interfaces[$0] != nil } ?? true
        }
    }

    static func check(_ values: [String: Value], against interface: Interface) throws(DBusError) {
        for (name, value) in values {
            guard let property = interface.properties[name] else {
                throw DBusError(.unknownProperty, "interface \(interface.name) has no property '\(name)'")
            }
            guard value.type == property.type else {
                throw DBusError(
                    .typeMismatch, "property '\(name)' has type '\(property.type)', got '\(value.type)'")
            }
        }
    }
}

// MARK: - Dispatch (loop thread)

extension Core {
    func queuePropertiesChanged(
        _ path: ObjectPath, _ interface: InterfaceName, _ changed: [String: Value], _ invalidated: [String]
    ) throws(DBusError) {
        let signal = try Connection.makeSignal(
            path: path, interface: .properties, member: "PropertiesChanged",
            body: [.string(interface.rawValue), .propertyMap(changed), .strings(invalidated)],
            destination: nil)
        try send(signal)
    }

    private func sendReply(to call: OwnedMessage, _ values: [Value]) {
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

    private func sendError(to call: OwnedMessage, _ error: DBusError) {
        guard dbus_message_get_no_reply(call.pointer) == 0, let reply = Core.makeError(to: call, error) else {
            return
        }
        try? send(reply)
    }

    /// Runs an async handler and sends its reply (or error) after everything the handler sent
    /// before returning.
    private func runHandler(
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
            guard member == "Introspect" else { return sendError(to: raw, unknownMethod(message)) }
            let xml = objects.withLock { tree -> String? in
                guard
                    tree.objects[path] != nil || tree.managers.contains(path) || tree.hasDescendants(path)
                        || path == .root
                else { return nil }
                return introspect(tree, path)
            }
            guard let xml else { return sendError(to: raw, unknownObject(path)) }
            return sendReply(to: raw, [.string(xml)])
        case InterfaceName.properties?:
            return handleProperties(message, raw: raw, member: member)
        case InterfaceName.objectManager?:
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
            return sendReply(to: raw, [result])
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

    private func unknownObject(_ path: ObjectPath) -> DBusError {
        DBusError(.unknownObject, "no object at path \(path)")
    }

    private func unknownInterface(_ path: ObjectPath, _ interface: InterfaceName) -> DBusError {
        DBusError(.unknownInterface, "object \(path) has no interface \(interface)")
    }

    private func unknownMethod(_ message: Message) -> DBusError {
        DBusError(
            .unknownMethod,
            "no method \(message.member?.rawValue ?? "?") with signature '\(message.signature)' on interface "
                + "\(message.interface?.rawValue ?? "(any)") at \(message.path?.rawValue ?? "?")")
    }

    private func handleProperties(_ message: Message, raw: OwnedMessage, member: String) {
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

// MARK: - Introspection XML

private func escapeXML(_ text: String) -> String {
    var out = ""
    for ch in text {
        switch ch {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(ch)
        }
    }
    return out
}

private let standardInterfacesXML = """
     <interface name="org.freedesktop.DBus.Introspectable">
      <method name="Introspect">
       <arg name="xml_data" type="s" direction="out"/>
      </method>
     </interface>
     <interface name="org.freedesktop.DBus.Peer">
      <method name="Ping"/>
      <method name="GetMachineId">
       <arg name="machine_uuid" type="s" direction="out"/>
      </method>
     </interface>

    """

private let propertiesInterfaceXML = """
     <interface name="org.freedesktop.DBus.Properties">
      <method name="Get">
       <arg name="interface_name" type="s" direction="in"/>
       <arg name="property_name" type="s" direction="in"/>
       <arg name="value" type="v" direction="out"/>
      </method>
      <method name="GetAll">
       <arg name="interface_name" type="s" direction="in"/>
       <arg name="props" type="a{sv}" direction="out"/>
      </method>
      <method name="Set">
       <arg name="interface_name" type="s" direction="in"/>
       <arg name="property_name" type="s" direction="in"/>
       <arg name="value" type="v" direction="in"/>
      </method>
      <signal name="PropertiesChanged">
       <arg name="interface_name" type="s"/>
       <arg name="changed_properties" type="a{sv}"/>
       <arg name="invalidated_properties" type="as"/>
      </signal>
     </interface>

    """

private let objectManagerInterfaceXML = """
     <interface name="org.freedesktop.DBus.ObjectManager">
      <method name="GetManagedObjects">
       <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
      </method>
      <signal name="InterfacesAdded">
       <arg name="object" type="o"/>
       <arg name="interfaces" type="a{sa{sv}}"/>
      </signal>
      <signal name="InterfacesRemoved">
       <arg name="object" type="o"/>
       <arg name="interfaces" type="as"/>
      </signal>
     </interface>

    """

private func args(_ signature: Signature, _ names: [String], direction: String?) -> String {
    var out = ""
    for (i, type) in signature.types.enumerated() {
        out += "   <arg"
        if i < names.count { out += " name=\"\(escapeXML(names[i]))\"" }
        out += " type=\"\(escapeXML(type.description))\""
        if let direction { out += " direction=\"\(direction)\"" }
        out += "/>\n"
    }
    return out
}

func introspect(_ tree: ObjectTree, _ path: ObjectPath) -> String {
    var xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>

        """
    xml += standardInterfacesXML
    if let object = tree.objects[path] {
        xml += propertiesInterfaceXML
        for name in object.order {
            guard let spec = object.interfaces[name]?.spec else { continue }
            xml += " <interface name=\"\(name.rawValue)\">\n"
            for method in spec.methods.values.sorted(by: { $0.name < $1.name }) {
                xml += "  <method name=\"\(method.name.rawValue)\">\n"
                xml += args(method.input ?? .empty, method.inputNames, direction: "in")
                xml += args(method.output ?? .empty, method.outputNames, direction: "out")
                xml += "  </method>\n"
            }
            for signal in spec.signals {
                xml += "  <signal name=\"\(signal.name.rawValue)\">\n"
                xml += args(signal.signature, signal.argNames, direction: nil)
                xml += "  </signal>\n"
            }
            for property in spec.properties.values.sorted(by: { $0.name < $1.name }) {
                xml +=
                    "  <property name=\"\(property.name.rawValue)\" type=\"\(escapeXML(property.type.description))\" "
                xml += "access=\"\(property.access.rawValue)\""
                if property.changes == .emitsValue {
                    xml += "/>\n"
                } else {
                    xml += ">\n   <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" "
                    xml += "value=\"\(property.changes.rawValue)\"/>\n  </property>\n"
                }
            }
            xml += " </interface>\n"
        }
    }
    if tree.managers.contains(path) { xml += objectManagerInterfaceXML }
    for child in tree.children(of: path) { xml += " <node name=\"\(escapeXML(child))\"/>\n" }
    xml += "</node>\n"
    return xml
}
