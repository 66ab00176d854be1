import BrokerSupport
import MQTT
import Testing

/// A subscription asked for before a publication exists at the broker before it: a message
/// published right after subscribe() to a matching topic comes back (what `hrm team --forget`
/// relies on to know the retained messages are all in).
@Suite struct SubscribeOrderTests {
    @Test func aPublicationAfterASubscribeComesBackOnIt() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            try await broker.publish("order/kept", "retained", retain: true)
            let client = try MQTTClient(broker.url(), options: quickOptions())
            try await client.connect()
            // Both in one turn of the client's thread: the subscribe must go out first.
            client.subscribe("order/#")
            client.publish(MQTTMessage(topic: "order/marker", text: "after"))
            // A deadline that only proves "not hung": closing the client ends its events.
            let deadline = Task {
                try? await Task.sleep(for: Patience.long)
                await client.close(within: .zero)
            }
            var seen: [String] = []
            for await event in client.events {
                guard case .message(let message) = event else { continue }
                seen.append(message.topic)
                if message.topic == "order/marker" { break }
            }
            deadline.cancel()
            // The retained message first (sent on subscribing), then the marker.
            #expect(seen == ["order/kept", "order/marker"])
            await client.close(within: .seconds(5))
        }
    }
}
