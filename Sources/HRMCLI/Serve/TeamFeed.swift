import MQTT
import Monitor
public import Outputs
import SessionLibrary

/// `hrm serve --mqtt-team URL`: instead of watching a strap here, the feed is every strap that hrm
/// hosts publish to the broker (the topic contract of `MQTTTopics`): a team page. The retained
/// topics give the current state at once; each event reaches clients as that host's `watch --json`
/// printed it, with `source` naming the host.
public enum TeamFeed {
    /// Until Ctrl-C, SIGTERM or a limit of `limits` (`--duration`; `--count` measurements from the
    /// broker, as `hrm team --count`), `whenStopped` first; 69 when the broker cannot be reached,
    /// 77 when it refuses the credentials.
    public static func run(
        _ text: String, limits: LimitOptions, feed: LiveFeed,
        whenStopped: @escaping @Sendable () async -> Void
    ) async -> Int32 {
        StandardOutput.prepare()
        guard let url = try? MQTTBrokerURL(parsing: text) else { return 64 }
        let client: MQTTClient
        do throws(MQTTError) {
            client = try MQTTClient(
                url,
                options: MQTTOptions(clientID: "hrm-serve-\(MQTTArguments.hostName)-\(ProcessID.current)"))
            try await client.connect()
        } catch {
            ServeSession.log("MQTT: \(error.message)")
            return error.code == .refused ? 77 : 69
        }
        let topics = MQTTTopics(prefix: "hrm", host: "+")
        for topic in topics.subscriptions() { client.subscribe(topic) }
        ServeSession.log("serving the straps every hrm host publishes to \(url)")
        let stop = SessionStop(whenStopped: whenStopped)
        let limits = limits.runLimits
        await stop.run {
            let timer = limits.timer(from: .now, stop)
            defer { timer?.cancel() }
            var connections = 0
            var measurements = 0
            for await event in client.events {
                switch event {
                case .message(let message):
                    guard take(message, into: feed) else { break }
                    measurements += 1
                    if let count = limits.count, measurements >= count { stop.stop(.countReached) }
                case .connected:
                    connections += 1
                    if connections > 1 { ServeSession.log("connected to \(url) again") }
                case .disconnected(let reason):
                    ServeSession.log("lost the broker at \(url) (\(reason)); reconnecting")
                case .dropped: break
                }
            }
        }
        await client.close(within: .seconds(1))
        return 0
    }

    /// One message of the contract into the feed; anything else (it comes from the network) is
    /// ignored. True when it was a measurement (for `--count`).
    @discardableResult
    static func take(_ message: MQTTMessage, into feed: LiveFeed) -> Bool {
        let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.first == "hrm", levels.count >= 3 else { return false }
        let host = levels[1]
        let text = String(decoding: message.payload, as: UTF8.self)
        if levels.count == 3, levels[2] == "status" {
            if text == "offline" { feed.hostOffline(host, at: Timestamp.now().description) }
            return false
        }
        let wanted: Set<MQTTTopics.Leaf> = [.measurement, .state, .info, .battery, .hrv]
        guard levels.count == 4, let leaf = MQTTTopics.Leaf(rawValue: levels[3]), wanted.contains(leaf),
            let object = try? JSONValue.parse(text), case .object = object, object["device"]?.string != nil
        else { return false }
        feed.take(remote: object, line: TeamBoard.naming(host, in: object), source: host)
        return leaf == .measurement
    }
}
