import BrokerSupport
import MQTT
import Testing

/// The MQTTError connect() throws (an issue if it does not).
func connectError(_ client: MQTTClient, sourceLocation: SourceLocation = #_sourceLocation) async -> MQTTError?
{
    do {
        try await client.connect()
        Issue.record("connect() succeeded", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}
