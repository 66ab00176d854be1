import Foundation
import Testing

/// `hrm relay` and `--relay`, the built binary, against hrm-sim's peripheral side: what the
/// strap sends reaches hrm-sim's consumers byte for byte, the relay's events, the refusals
/// before the strap is touched, and unregistering first on SIGTERM. Runs are steered by what
/// hrm prints and by hrm-sim's log, never by time.
@Suite struct RelayBinaryTests {
    static let strap = "/org/bluez/hci0/dev_D2_4B_7E_10_20_30"
    static let first = "C0:FF:EE:00:00:01"
    static let second = "C0:FF:EE:00:00:02"
    static let measurement = "00002a37-0000-1000-8000-00805f9b34fb"

    static func log(_ path: String) throws -> [[String: Any]] { try WatchScenarioTests.log(path) }

    static func relayLines(_ stdout: String) -> [[String: Any]] {
        WatchBinaryTests.lines(stdout).filter { $0["type"] as? String == "relay" }
    }

    /// Where `values` lie in `sent` as a contiguous run (none lost, none added, none reordered).
    static func run(of values: [String], in sent: [String]) -> Int? {
        guard !values.isEmpty, values.count <= sent.count else { return nil }
        return (0...(sent.count - values.count)).first { Array(sent[$0..<($0 + values.count)]) == values }
    }

    /// The name of a log record: a call's member, else the event.
    static func name(_ record: [String: Any]) -> String {
        (record["event"] as? String == "call" ? record["member"] as? String : record["event"] as? String)
            ?? ""
    }

    @Test func everyNotificationReachesTheConsumerByteForByteInOrder() async throws {
        let log = WatchBinaryTests.temporary("relay.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let steering = Steering()
        // The first consumer leaves after 16 heart-rate values, across the strap's drop.
        let run = Task {
            try await HRMProcess.runUnderSim(
                "relay", ["relay", "--json", "Polar"], log: log, patience: .seconds(150),
                terminateWhen: steering.check)
        }
        let left = await steering.until(within: .seconds(120)) {
            $0.contains(#""state":"consumer_disconnected""#)
        }
        steering.stop()
        let result = try await run.value
        #expect(left, "the consumer never left: \(result.stdout)")
        #expect(result.status == 0, "\(result.stderr)")

        let records = try Self.log(log)
        let sent = records.filter {
            $0["event"] as? String == "notify" && ($0["path"] as? String)?.hasPrefix(Self.strap) == true
        }
        .compactMap { $0["hex"] as? String }
        let received = records.filter {
            $0["event"] as? String == "consumer-value" && $0["consumer"] as? String == Self.first
                && $0["uuid"] as? String == Self.measurement
        }.compactMap { $0["hex"] as? String }
        try #require(received.count == 16, "\(received)")
        // A contiguous run of what the strap sent: none lost, none added, none reordered.
        let start = try #require(Self.run(of: received, in: sent), "\(received) in \(sent)")

        // While the strap was away (from the drop to the link back), the consumer got nothing but
        // what the strap had sent before it (on its way): no frozen value, nothing made up.
        let calls = records.map(Self.name)
        let drop = try #require(calls.firstIndex(of: "drop"))
        let back = try #require(
            records.indices.first {
                $0 > drop && records[$0]["event"] as? String == "state"
                    && records[$0]["connected"] as? Bool == true
            })
        let notifyAt = records.indices.filter {
            records[$0]["event"] as? String == "notify"
                && (records[$0]["path"] as? String)?.hasPrefix(Self.strap) == true
        }
        let valueAt = records.indices.filter {
            records[$0]["event"] as? String == "consumer-value"
                && records[$0]["consumer"] as? String == Self.first
                && records[$0]["uuid"] as? String == Self.measurement
        }
        for (k, position) in valueAt.enumerated() where position > drop && position < back {
            #expect(notifyAt[start + k] < drop, "value \(k) came during the drop and was not sent before it")
        }
        #expect(!notifyAt.contains { $0 > drop && $0 < back })
        // The drop came while the consumer listened: values before it and after it.
        let firstValue = try #require(calls.firstIndex(of: "consumer-value"))
        let lastValue = try #require(calls.lastIndex(of: "consumer-value"))
        #expect(firstValue < drop && back < lastValue)

        // The battery change went out as a notification of 0x2A19; reads got the strap's values.
        let battery = records.filter {
            $0["event"] as? String == "consumer-value"
                && ($0["uuid"] as? String)?.hasPrefix("00002a19") == true
        }
        #expect(battery.compactMap { $0["hex"] as? String } == ["56"])
        let reads = Dictionary(
            records.filter { $0["event"] as? String == "consumer-read" }.compactMap {
                r -> (String, String)? in
                guard let uuid = r["uuid"] as? String, let hex = r["hex"] as? String else { return nil }
                return (String(uuid.prefix(8)), hex)
            }, uniquingKeysWith: { a, _ in a })
        #expect(reads["00002a38"] == "01")
        #expect(reads["00002a29"] == "68726d")  // "hrm"

        // What the advertisement said.
        let advertisement = try #require(
            records.first { $0["event"] as? String == "advertisement-registered" })
        #expect(advertisement["type"] as? String == "peripheral")
        #expect(advertisement["appearance"] as? Int == 0x0341)
        #expect(advertisement["local_name"] as? String == "hrm")
        // Once the strap's name is known, it is advertised: "hrm " and the name, cut to fit.
        let advertised = records.filter { $0["event"] as? String == "advertisement-registered" }.compactMap {
            $0["local_name"] as? String
        }
        #expect(advertised == ["hrm", "hrm Polar H10 7E"])
        #expect((advertisement["uuids"] as? [String])?.first == "0000180d-0000-1000-8000-00805f9b34fb")

        // The relay was registered before the strap was touched, and taken back first on SIGTERM.
        let registered = try #require(calls.firstIndex(of: "application-registered"))
        let connect = try #require(calls.firstIndex(of: "Connect"))
        #expect(registered < connect)
        let unregisterAdvertisement = try #require(calls.lastIndex(of: "UnregisterAdvertisement"))
        let unregisterApplication = try #require(calls.firstIndex(of: "UnregisterApplication"))
        let released = try #require(calls.lastIndex(of: "acquire-released"))
        #expect(unregisterAdvertisement < unregisterApplication && unregisterApplication < released)
        #expect(!calls.contains("advertisement-released"))

        // The relay events: both consumers came, the first subscribed and left.
        let relay = Self.relayLines(result.stdout)
        let states = relay.map { "\($0["state"] as? String ?? "")/\($0["consumer"] as? String ?? "-")" }
        #expect(states.contains("consumer_connected/\(Self.first)"))
        #expect(states.contains("consumer_connected/\(Self.second)"))
        #expect(states.contains("consumer_disconnected/\(Self.first)"))
        // bluetoothd says only that a consumer subscribed, not which: hrm names none.
        #expect(states.contains("subscribed/-"), "\(states)")
        #expect(states.filter { $0.hasPrefix("subscribed") }.count == 1)
        // The second consumer never takes a value: the strap's stream went on all the same.
        let measurements = WatchScenarioTests.measurements(result.stdout).count
        #expect(measurements >= 16)
    }

    @Test func aMalformedFrameIsNotRelayed() async throws {
        let log = WatchBinaryTests.temporary("relay-malformed.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let steering = Steering()
        let run = Task {
            try await HRMProcess.runUnderSim(
                "relay-malformed", ["relay", "--json", "D2:4B:7E:10:20:33"], log: log,
                patience: .seconds(150),
                terminateWhen: steering.check)
        }
        let left = await steering.until(within: .seconds(120)) {
            $0.contains(#""state":"consumer_disconnected""#)
        }
        steering.stop()
        let result = try await run.value
        #expect(left && result.status == 0, "\(result.stderr)")
        let received = try Self.log(log).filter { $0["event"] as? String == "consumer-value" }.compactMap {
            $0["hex"] as? String
        }
        // The strap's cycle is 16484d03, 0e4801 (bad), 16494d0301 (bad), "" (bad), 064a.
        #expect(received.count == 6)
        #expect(Set(received).isSubset(of: ["16484d03", "064a"]), "\(received)")
        for (a, b) in zip(received, received.dropFirst()) {
            #expect(a != b, "one good frame of each cycle, in turn")
        }
    }

    @Test func afterBluetoothdRestartsTheRelayRegistersAgain() async throws {
        let log = WatchBinaryTests.temporary("relay-restart.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let steering = Steering()
        let run = Task {
            try await HRMProcess.runUnderSim(
                "relay-restart", ["relay", "--json", "Polar"], log: log, patience: .seconds(150),
                terminateWhen: steering.check)
        }
        // The consumer leaves twice: before bluetoothd restarts, and after it came back.
        let twice = await steering.until(within: .seconds(120)) {
            $0.components(separatedBy: #""state":"consumer_disconnected""#).count == 3
        }
        steering.stop()
        let result = try await run.value
        #expect(twice && result.status == 0, "\(result.stdout)\(result.stderr)")
        let records = try Self.log(log)
        let names = records.map(Self.name)
        // (Registering again can come before hrm-sim logs that it is up: from when it went down.)
        let down = try #require(
            records.firstIndex { $0["event"] as? String == "restart" && $0["phase"] as? String == "down" })
        #expect(names.filter { $0 == "application-registered" }.count == 2)
        #expect(
            names[down...].contains("application-registered")
                && names[down...].contains("advertisement-registered"))
        // What the consumer took once bluetoothd was back: what the strap sent, byte for byte.
        let sent = records.filter { $0["event"] as? String == "notify" }.compactMap { $0["hex"] as? String }
        let after = records[down...].filter { $0["event"] as? String == "consumer-value" }.compactMap {
            $0["hex"] as? String
        }
        try #require(after.count == 6, "\(after)")
        #expect(Self.run(of: after, in: sent) != nil, "\(after) in \(sent)")
    }

    @Test func watchWithRelayPrintsTheConsumersForPeople() async throws {
        let log = WatchBinaryTests.temporary("relay-watch.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let steering = Steering()
        let run = Task {
            try await HRMProcess.runUnderSim(
                "relay", ["watch", "--relay", "--relay-name", "Bike HR", "Polar"], log: log,
                patience: .seconds(150),
                terminateWhen: steering.check)
        }
        let seen = await steering.until(within: .seconds(120)) {
            $0.contains("relay: consumer \(Self.second) connected")
        }
        steering.stop()
        let result = try await run.value
        #expect(seen, "\(result.stdout)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("-- relay: consumer \(Self.first) connected\n"))
        // The name asked for is kept: the strap's does not replace it.
        let advertised = try Self.log(log).filter { $0["event"] as? String == "advertisement-registered" }
        #expect(advertised.compactMap { $0["local_name"] as? String } == ["Bike HR"])
    }

    @Test(arguments: [
        ("relay-no-peripheral", "peripheral_unsupported", "cannot serve as a Bluetooth LE peripheral"),
        ("relay-no-slots", "peripheral_refused", "Maximum advertisements reached"),
    ])
    func aRelayThatCannotBeIsExit69BeforeTheStrap(scenario: String, code: String, words: String) async throws
    {
        let log = WatchBinaryTests.temporary("relay-refused.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(scenario, ["relay", "--json"], log: log)
        #expect(result.status == 69)
        #expect(result.stderr.contains(words), "\(result.stderr)")
        let error = WatchBinaryTests.lines(result.stdout).first { $0["type"] as? String == "error" }
        #expect(error?["code"] as? String == code, "\(result.stdout)")
        let names = try Self.log(log).map(Self.name)
        #expect(!names.contains("Connect") && !names.contains("StartDiscovery"))
        // Nothing is left registered: an application registered before the refusal is taken back.
        if names.contains("application-registered") { #expect(names.contains("application-unregistered")) }
    }
}
