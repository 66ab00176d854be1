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

extension ObjectMirror {
    /// The events that turn this mirror into `objects` (a fresh GetManagedObjects), in an order a
    /// watcher can follow: a connected device that is gone says `Connected: false` first, then
    /// what went is removed (children first), what changed is changed, and what came is added
    /// (parents first).
    func differences(to objects: [ObjectPath: [String: Properties]]) -> [ObjectEvent] {
        var events: [ObjectEvent] = []
        var removals: [ObjectEvent] = []
        let device = BlueZNames.Interface.device
        for (path, interfaces) in self.objects.sorted(by: { $0.key.rawValue > $1.key.rawValue }) {
            let gone = interfaces.keys.filter { objects[path]?[$0] == nil }.sorted()
            guard !gone.isEmpty else { continue }
            if gone.contains(device), case .boolean(true)? = interfaces[device]?["Connected"] {
                events.append(
                    .propertiesChanged(
                        PropertiesChanged(
                            path: path, interface: device,
                            changed: ["ServicesResolved": .boolean(false), "Connected": .boolean(false)],
                            invalidated: [])))
            }
            removals.append(.interfacesRemoved(path: path, interfaces: gone))
        }
        events += removals
        for (path, interfaces) in objects.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            var added: [String: Properties] = [:]
            for (name, properties) in interfaces.sorted(by: { $0.key < $1.key }) {
                guard let old = self.objects[path]?[name] else {
                    added[name] = properties
                    continue
                }
                let changed = properties.filter { old[$0.key] != $0.value }
                let invalidated = old.keys.filter { properties[$0] == nil }.sorted()
                if !changed.isEmpty || !invalidated.isEmpty {
                    events.append(
                        .propertiesChanged(
                            PropertiesChanged(
                                path: path, interface: name, changed: changed, invalidated: invalidated)))
                }
            }
            if !added.isEmpty { events.append(.interfacesAdded(path: path, interfaces: added)) }
        }
        return events
    }
}
