import Monitor
import SessionLibrary

/// Home Assistant's MQTT discovery: a retained config per sensor, so that a strap appears in
/// Home Assistant as a device with a heart-rate and a battery sensor, unavailable when hrm is
/// offline.
package struct HomeAssistantDiscovery: Sendable {
    package let prefix: String
    package let topics: MQTTTopics

    /// A heart rate older than this shows as unavailable: a strap gone quiet is not a number.
    package static let expireAfterSeconds = 30

    /// What the strap said about itself, for the device block.
    package struct Strap: Sendable, Equatable {
        package var address: String
        package var name: String?
        package var manufacturer: String?
        package var model: String?
    }

    /// `(topic, payload)` for each sensor of `strap`.
    package func configs(for strap: Strap) -> [(topic: String, payload: String)] {
        let level = MQTTTopics.deviceLevel(strap.address)
        var device = JSONLine()
        device.add("identifiers", ["hrm_\(level)"])
        device.add("name", strap.name ?? strap.address)
        device.add("manufacturer", strap.manufacturer ?? "unknown")
        device.add("model", strap.model ?? "heart-rate monitor")

        func config(_ sensor: String, _ fill: (inout JSONLine) -> Void) -> (String, String) {
            var json = JSONLine()
            fill(&json)
            json.add("unique_id", "hrm_\(level)_\(sensor)")
            json.add("object_id", "hrm_\(level)_\(sensor)")
            json.add("availability_topic", topics.status)
            json.add("payload_available", "online")
            json.add("payload_not_available", "offline")
            json.add("device", object: device)
            return ("\(prefix)/sensor/hrm_\(level)_\(sensor)/config", json.line)
        }
        return [
            config("bpm") {
                $0.add("name", "Heart rate")
                $0.add("state_topic", topics.device(strap.address, .bpm))
                $0.add("unit_of_measurement", "bpm")
                $0.add("state_class", "measurement")
                $0.add("icon", "mdi:heart-pulse")
                $0.add("expire_after", Self.expireAfterSeconds)
            },
            config("battery") {
                $0.add("name", "Battery")
                $0.add("state_topic", topics.device(strap.address, .battery))
                $0.add("unit_of_measurement", "%")
                $0.add("device_class", "battery")
                $0.add("state_class", "measurement")
                $0.add("entity_category", "diagnostic")
            },
        ]
    }

    /// Home Assistant says `online` here when it starts: the configs are published again then.
    package var birthTopic: String { "\(prefix)/status" }
}
