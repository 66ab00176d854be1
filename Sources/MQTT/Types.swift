/// MQTT's two delivery guarantees that hrm uses (QoS 2 buys nothing for measurements that carry
/// their own time and sequence).
public enum MQTTQoS: Int32, Sendable {
    /// QoS 0: waits in the outbox while the broker is away, but once handed to libmosquitto it is
    /// done: never acknowledged, never sent again, lost if the link drops before it is written.
    case atMostOnce = 0
    /// QoS 1: kept until the broker's PUBACK, sent again after a reconnect, so it may arrive twice.
    case atLeastOnce = 1
}

/// A message to publish, or one received on a subscription.
public struct MQTTMessage: Sendable, Equatable {
    /// The topic published to, or the one a received message came on (never a filter).
    public var topic: String
    /// The bytes, as sent; hrm's are UTF-8 JSON or text.
    public var payload: [UInt8]
    /// The delivery guarantee: asked for when publishing, the one delivered with when received.
    public var qos: MQTTQoS
    /// Whether the broker keeps it as the topic's last value for future subscribers.
    public var retain: Bool

    /// A message of raw bytes; QoS 1, not retained, by default.
    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    /// The payload as UTF-8.
    public init(topic: String, text: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }
}

/// How an `MQTTClient` connects and what it holds while the broker is away.
public struct MQTTOptions: Sendable {
    /// The MQTT client identifier; empty lets the broker choose one.
    public var clientID: String
    /// Published by the broker when the link drops without DISCONNECT (a crash, kill -9, a lost
    /// network): set a retained "offline" status here.
    public var will: MQTTMessage? = nil
    /// mqtts: this CA file (PEM); nil = the system CA store (/etc/ssl/certs).
    public var caFile: String? = nil
    /// Between 5 s and 65535 s (libmosquitto's limits; values outside are clamped).
    public var keepAlive: Duration = .seconds(30)
    /// For each attempt: the TCP connection, TLS handshake and the broker's CONNACK.
    public var connectTimeout: Duration = .seconds(10)
    /// Messages held while the broker is away; past it the oldest are dropped.
    public var outboxCapacity: Int = 10_000
    /// Backoff between reconnection attempts: starts at the lower bound, doubles after each
    /// failed attempt, up to the upper bound.
    public var reconnectDelay: ClosedRange<Duration> = .milliseconds(500) ... .seconds(10)
    /// How long what the broker sends may wait to be read while nothing else wakes the client's
    /// thread; `.zero` (the default) reads it at once. The broker answers each QoS 1 message with
    /// an acknowledgement: a client that mostly publishes saves a wake-up per message by reading
    /// them when it hands over the next message, or after this long. Messages on subscriptions
    /// and a link the broker closed wait as long (a reset link is noticed at once); while closing,
    /// or with half the in-flight window unacknowledged, everything is read at once.
    public var readDelay: Duration = .zero

    /// The defaults, with `clientID` (empty: the broker chooses one).
    public init(clientID: String) {
        self.clientID = clientID
    }
}

/// What an `MQTTClient` reports on `events`, in order.
public enum MQTTEvent: Sendable, Equatable {
    /// Every (re)connection accepted by the broker.
    case connected
    /// The link to the broker was lost (not after close()).
    case disconnected(reason: String)
    /// The outbox was full: this many oldest messages were discarded (drops are added up and
    /// reported at most four times a second).
    case dropped(count: Int)
    /// A message on a subscription.
    case message(MQTTMessage)
}
