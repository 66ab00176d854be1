import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// The topic contract, Home Assistant's configs and `hrm team`'s board, without a broker (the
/// broker tests are in MQTTBinaryTests).
@Suite struct MQTTContractTests {
    let topics = MQTTTopics(prefix: "hrm", host: "pi-kitchen")

    @Test func topicNames() {
        #expect(topics.status == "hrm/pi-kitchen/status")
        #expect(topics.device("C0:FF:EE:00:00:01", .measurement) == "hrm/pi-kitchen/c0ffee000001/measurement")
        #expect(topics.device("C0:FF:EE:00:00:01", .bpm) == "hrm/pi-kitchen/c0ffee000001/bpm")
        #expect(topics.subscriptions().first == "hrm/+/status")
        #expect(topics.subscriptions().contains("hrm/+/+/measurement"))
    }

    @Test func topicLevels() {
        #expect(MQTTTopics.problem(withLevel: "pi-1") == nil)
        #expect(MQTTTopics.problem(withLevel: "") != nil)
        for bad in ["a/b", "a+", "#"] { #expect(MQTTTopics.problem(withLevel: bad) != nil, "\(bad)") }
        #expect(MQTTTopics.level("my host/+#") == "my_host___")
    }

    @Test func homeAssistantConfigs() throws {
        let discovery = HomeAssistantDiscovery(prefix: "homeassistant", topics: topics)
        let configs = discovery.configs(
            for: .init(address: "C0:FF:EE:00:00:01", name: "Polar H10", manufacturer: "Polar", model: "H10"))
        #expect(
            configs.map(\.topic) == [
                "homeassistant/sensor/hrm_c0ffee000001_bpm/config",
                "homeassistant/sensor/hrm_c0ffee000001_battery/config",
            ])
        let bpm = try #require(
            try JSONSerialization.jsonObject(with: Data(configs[0].payload.utf8)) as? [String: Any])
        #expect(bpm["state_topic"] as? String == "hrm/pi-kitchen/c0ffee000001/bpm")
        #expect(bpm["unit_of_measurement"] as? String == "bpm")
        #expect(bpm["state_class"] as? String == "measurement")
        #expect(bpm["availability_topic"] as? String == "hrm/pi-kitchen/status")
        #expect(bpm["unique_id"] as? String == "hrm_c0ffee000001_bpm")
        #expect(bpm["expire_after"] as? Int == 30)
        let device = try #require(bpm["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == ["hrm_c0ffee000001"])
        #expect(device["name"] as? String == "Polar H10")
        #expect(device["manufacturer"] as? String == "Polar")
        #expect(device["model"] as? String == "H10")
        let battery = try #require(
            try JSONSerialization.jsonObject(with: Data(configs[1].payload.utf8)) as? [String: Any])
        #expect(battery["device_class"] as? String == "battery")
        #expect(battery["state_topic"] as? String == "hrm/pi-kitchen/c0ffee000001/battery")
    }

    @Test func theBoardFollowsHostsAndStraps() throws {
        var board = TeamBoard(prefix: "hrm")
        let measurement =
            #"{"type":"measurement","time":"2026-11-23T10:00:00.000Z","device":"C0:FF:EE:00:00:01","bpm":134,"zone":3}"#
        #expect(board.take(topic: "hrm/pi-1/status", payload: Array("online".utf8), at: 0) == .changed)
        _ = board.take(
            topic: "hrm/pi-1/c0ffee000001/info", payload: Array(#"{"type":"info","name":"Polar H10"}"#.utf8),
            at: 0)
        let update = board.take(
            topic: "hrm/pi-1/c0ffee000001/measurement", payload: Array(measurement.utf8), at: 5)
        guard case .measurement(let row, let json) = update else {
            Issue.record("\(update)")
            return
        }
        #expect(row.bpm == 134 && row.zone == 3 && row.name == "Polar H10" && row.lastSample == 5)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["source"] as? String == "pi-1")
        #expect(object["bpm"] as? Int == 134)
        #expect(json.hasPrefix(#"{"source":"pi-1","type":"measurement""#))
        _ = board.take(topic: "hrm/pi-1/status", payload: Array("offline".utf8), at: 6)
        #expect(!board.online("pi-1"))
        let lines = TeamRendering.table(board, now: 3005, width: 200)
        #expect(lines.count == 2)
        #expect(lines[1].contains("pi-1") && lines[1].contains("Polar H10") && lines[1].contains("134"))
        #expect(lines[1].contains("host offline") && lines[1].contains("3 s"))
    }

    /// Whatever a broker carries, the board stays whole and ignores what is not hrm's.
    @Test func hostileMessagesAreIgnored() {
        var board = TeamBoard(prefix: "hrm")
        let cases: [(String, String)] = [
            ("hrm/h/d/measurement", "not json"),
            ("hrm/h/d/measurement", #"{"bpm":-5}"#),
            ("hrm/h/d/measurement", #"{"bpm":1e300}"#),
            ("hrm/h/d/measurement", "[1,2]"),
            ("hrm/h/d/state", "{}"),
            ("hrm/h/d/unknown", "1"),
            ("other/h/d/measurement", #"{"bpm":60}"#),
            ("hrm/too/many/levels/here", "x"),
        ]
        for (topic, payload) in cases {
            let update = board.take(topic: topic, payload: Array(payload.utf8), at: 0)
            if case .measurement = update { Issue.record("\(topic) \(payload) taken as a measurement") }
        }
        var row = TeamBoard.Row(host: "\u{1B}[2Jevil", device: "d")
        row.name = "\u{07}bell"
        #expect(!TeamRendering.line(row, clock: "00:00:00").contains("\u{1B}"))
        #expect(!TeamRendering.line(row, clock: "00:00:00").contains("\u{07}"))
    }

    /// A broker full of retained fake hosts: the board keeps `capacity` straps and hosts and
    /// counts the rest; a payload it does not take makes no row.
    @Test func theBoardKeepsAtMostItsCapacity() {
        var board = TeamBoard(prefix: "hrm", capacity: 50)
        for host in 0..<200 {
            _ = board.take(topic: "hrm/h\(host)/status", payload: Array("online".utf8), at: 0)
            _ = board.take(
                topic: "hrm/h\(host)/d/info", payload: Array(#"{"type":"info","name":"x"}"#.utf8), at: 0)
        }
        #expect(board.rows.count == 50)
        #expect(board.hosts.count == 50)
        #expect(board.refused == 300)
        _ = board.take(topic: "hrm/h1/d/measurement", payload: Array(#"{"bpm":90}"#.utf8), at: 1)
        #expect(board.rows.first { $0.host == "h1" }?.bpm == 90, "a strap kept goes on being followed")
        var fresh = TeamBoard(prefix: "hrm")
        _ = fresh.take(topic: "hrm/h/d/measurement", payload: Array("not json".utf8), at: 0)
        _ = fresh.take(topic: "hrm/h/d/info", payload: Array("[1]".utf8), at: 0)
        #expect(fresh.rows.isEmpty)
    }

    /// The table fits the screen: at most `height - 1` lines, the straps that sent a measurement
    /// first, and a last line that counts the ones left out.
    @Test func theTableFitsTheScreen() {
        var board = TeamBoard(prefix: "hrm")
        for host in 0..<500 {
            _ = board.take(
                topic: "hrm/fake\(host)/d/info", payload: Array(#"{"type":"info","name":"x"}"#.utf8), at: 0)
        }
        _ = board.take(topic: "hrm/real/d/measurement", payload: Array(#"{"bpm":120}"#.utf8), at: 0)
        let lines = TeamRendering.table(board, now: 0, width: 80, height: 40)
        #expect(lines.count == 39)
        #expect(lines[1].hasPrefix("real"), "\(lines[1])")
        #expect(lines.last == "… and 464 more straps", "\(lines.last ?? "")")
        #expect(TeamRendering.table(board, now: 0, width: 80, height: 2).count <= 2)
        #expect(TeamRendering.table(board, now: 0, width: 80).count == 502)
    }
}
