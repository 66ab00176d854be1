import DBus
import Logging
internal import Threads

// What the client logs of bluetoothd's signals: at debug, one line per signal that can change a
// decision (objects added and removed, a device's Connected, ServicesResolved, RSSI, an adapter's
// Powered), with the few properties that matter; at trace, each notification's bytes. Called
// only when the logger logs at debug (`logsSignals`), so a signal costs one test of a flag
// otherwise.

extension BlueZClient {
    /// The properties worth a look in a line about an object: what hrm decides by.
    static let loggedProperties: [String] = [
        "Address", "Name", "Alias", "RSSI", "Connected", "ServicesResolved", "Paired", "Trusted", "Powered",
        "PowerState", "Discovering", "UUID", "Flags", "NotifyAcquired", "Notifying", "Percentage",
    ]

    /// The interfaces every object has: not worth naming.
    static let standardInterfaces: Set<String> = [
        "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
    ]

    func logLoaded() {
        let adapters = adapters()
        let devices = mirror.paths(with: Self.deviceInterface).count
        logger.debug(
            "bluetoothd's objects loaded: \(mirror.objects.count) objects, \(devices) devices",
            metadata: ["adapters": "\(adapters.summary)"])
    }

    func log(_ event: ObjectEvent) {
        switch event {
        case .interfacesAdded(let path, let interfaces):
            let names = interfaces.keys.filter { !Self.standardInterfaces.contains($0) }.sorted()
            var properties: [String: Value] = [:]
            for map in interfaces.values { properties.merge(map) { first, _ in first } }
            logger.debug(
                "InterfacesAdded \(path) \(names.joined(separator: ", "))\(Self.highlights(properties))")
        case .interfacesRemoved(let path, let interfaces):
            let names = interfaces.filter { !Self.standardInterfaces.contains($0) }.sorted()
            logger.debug("InterfacesRemoved \(path) \(names.joined(separator: ", "))")
        case .propertiesChanged(let change):
            if change.interface == Self.characteristicInterface, change.changed.count == 1,
                case .bytes(let bytes)? = change.changed["Value"]
            {
                // A notification by StartNotify (or a ReadValue's echo): one per beat, trace only.
                guard logsNotifications else { return }
                guard sessions[AttributePath(change.path)] != nil else {
                    return logger.trace("Value \(change.path): \(Value.bytes(bytes).logSummary())")
                }
                logger.trace("notification \(change.path) by StartNotify: \(Value.bytes(bytes).logSummary())")
                return
            }
            var text = "PropertiesChanged \(change.path) \(change.interface)"
            for key in change.changed.keys.sorted() {
                text += " \(key)=\(change.changed[key]?.logSummary(limit: 80) ?? "")"
            }
            if !change.invalidated.isEmpty { text += " invalidated=\(change.invalidated.sorted())" }
            logger.debug("\(text)")
        }
    }

    /// ` Address="C0:FF:EE:00:00:01" RSSI=-58`: the properties of `loggedProperties` present.
    static func highlights(_ properties: [String: Value]) -> String {
        var text = ""
        for key in loggedProperties {
            guard let value = properties[key] else { continue }
            text += " \(key)=\(value.logSummary(limit: 80))"
        }
        return text
    }

    /// `deliver` with a trace line first, when notifications are logged; else `deliver` itself,
    /// so that a notification costs nothing more when they are not.
    func tracing(
        _ deliver: @escaping @Sendable ([UInt8]) -> Void, _ path: AttributePath, by method: String
    ) -> @Sendable ([UInt8]) -> Void {
        guard logsNotifications else { return deliver }
        let logger = self.logger
        return { bytes in
            logger.trace("notification \(path.objectPath) by \(method): \(Value.bytes(bytes).logSummary())")
            deliver(bytes)
        }
    }
}

extension [Adapter] {
    /// `hci0 (powered), hci1 (off)`.
    var summary: String {
        isEmpty
            ? "none"
            : map { "\($0.name) (\($0.blocked ? "blocked" : $0.powered ? "powered" : "off"))" }
                .joined(separator: ", ")
    }
}
