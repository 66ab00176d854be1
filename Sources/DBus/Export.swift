import Synchronization

// The export API on `Connection`: export/unexport objects, object managers, property values and
// the PropertiesChanged they emit. Incoming calls are answered in ExportDispatch.swift.

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

    /// Stops `path` being an object manager (GetManagedObjects there gets UnknownInterface); exported
    /// objects stay.
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

extension Core {
    /// Queues one PropertiesChanged (any thread), in order with everything sent after it.
    func queuePropertiesChanged(
        _ path: ObjectPath, _ interface: InterfaceName, _ changed: [String: Value], _ invalidated: [String]
    ) throws(DBusError) {
        let signal = try Connection.makeSignal(
            path: path, interface: .properties, member: "PropertiesChanged",
            body: [.string(interface.rawValue), .propertyMap(changed), .strings(invalidated)],
            destination: nil)
        try send(signal)
    }
}
