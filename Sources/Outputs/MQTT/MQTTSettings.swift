package import MQTT

/// Where and how a session publishes.
package struct MQTTSettings: Sendable {
    package var url: MQTTBrokerURL
    package var topics: MQTTTopics
    package var caFile: String?
    /// Home Assistant's discovery prefix; nil: no discovery.
    package var discoveryPrefix: String?

    /// Every stored property, as given.
    package init(url: MQTTBrokerURL, topics: MQTTTopics, caFile: String?, discoveryPrefix: String?) {
        self.url = url
        self.topics = topics
        self.caFile = caFile
        self.discoveryPrefix = discoveryPrefix
    }
}
