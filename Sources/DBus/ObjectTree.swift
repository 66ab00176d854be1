// The connection's exported objects by path, and which paths are object managers. It lives in
// `Core.objects`, a mutex: the export API and remote Set calls change it from any thread.

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
