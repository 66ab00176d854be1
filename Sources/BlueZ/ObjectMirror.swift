import DBus

/// bluetoothd's object tree as last seen: GetManagedObjects, kept current from InterfacesAdded,
/// InterfacesRemoved and PropertiesChanged, applied in bus order.
struct ObjectMirror: Sendable {
    typealias Properties = [String: Value]
    private(set) var objects: [ObjectPath: [String: Properties]] = [:]

    init(_ objects: [ObjectPath: [String: Properties]] = [:]) {
        self.objects = objects
    }

    mutating func apply(_ event: ObjectEvent) {
        switch event {
        case .interfacesAdded(let path, let interfaces):
            for (name, properties) in interfaces { objects[path, default: [:]][name] = properties }
        case .interfacesRemoved(let path, let interfaces):
            for name in interfaces { objects[path]?[name] = nil }
            if objects[path]?.isEmpty == true { objects[path] = nil }
        case .propertiesChanged(let change):
            // A change to an object we do not know (it raced GetManagedObjects) is dropped:
            // its InterfacesAdded carries the full state.
            guard objects[change.path]?[change.interface] != nil else { return }
            for (key, value) in change.changed { objects[change.path]?[change.interface]?[key] = value }
            for key in change.invalidated { objects[change.path]?[change.interface]?[key] = nil }
        }
    }

    func properties(_ path: ObjectPath, _ interface: String) -> Properties? {
        objects[path]?[interface]
    }

    /// Paths with `interface`, sorted.
    func paths(with interface: String) -> [ObjectPath] {
        objects.filter { $0.value[interface] != nil }.keys.sorted()
    }
}
