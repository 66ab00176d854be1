import BrokerSupport
import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm team` forgets hosts that are gone (#26 item 12): the table leaves out a host offline for
/// `--hide-offline-after`, and `--forget HOST` clears what the broker keeps for it.
@Suite struct TeamForgetTests {
    static func message(_ topic: String, _ text: String) -> (String, [UInt8]) { (topic, Array(text.utf8)) }

    @Test func aHostOfflineLongEnoughLeavesTheTable() {
        var board = TeamBoard(prefix: "hrm")
        _ = board.take(topic: "hrm/oldpi/status", payload: Array("offline".utf8), at: 0)
        _ = board.take(
            topic: "hrm/oldpi/c0ffee000001/state", payload: Array(#"{"state":"stopped"}"#.utf8), at: 0)
        _ = board.take(topic: "hrm/gym/status", payload: Array("online".utf8), at: 0)
        _ = board.take(
            topic: "hrm/gym/c0ffee000002/measurement", payload: Array(#"{"bpm":120}"#.utf8), at: 1000)
        let fiveMinutes: Int64 = 300_000
        let early = TeamRendering.table(board, now: fiveMinutes - 1, width: 100, forgetAfter: fiveMinutes)
        #expect(early.contains { $0.hasPrefix("oldpi") && $0.contains("host offline") }, "\(early)")
        let late = TeamRendering.table(board, now: fiveMinutes, width: 100, forgetAfter: fiveMinutes)
        #expect(!late.contains { $0.hasPrefix("oldpi") }, "\(late)")
        #expect(late.contains { $0.hasPrefix("gym") }, "\(late)")
        // Back online: shown again, and its clock starts over when it next goes.
        _ = board.take(topic: "hrm/oldpi/status", payload: Array("online".utf8), at: 400_000)
        #expect(board.shown(at: 400_001, forgetAfter: fiveMinutes).contains { $0.host == "oldpi" })
    }

    @Test func forgetClearsEveryRetainedTopicOfTheHost() async throws {
        guard MQTTBinaryTests.available() else { return }
        try await withBroker { broker in
            for (topic, text) in [
                ("hrm/oldpi/status", "offline"), ("hrm/oldpi/c0ffee000001/state", #"{"state":"stopped"}"#),
                ("hrm/oldpi/c0ffee000001/bpm", "72"), ("hrm/oldpi/c0ffee000001/info", #"{"name":"Old"}"#),
                ("hrm/gym/status", "online"),
            ] {
                try await broker.publish(topic, text, retain: true)
            }
            let url = "mqtt://127.0.0.1:\(broker.port)"
            let forgot = try await HRMProcess.run(["team", url, "--no-config", "--forget", "oldpi"])
            #expect(forgot.status == 0, "\(forgot.stderr)")
            #expect(
                forgot.stderr.contains("hrm team: forgot oldpi: 4 retained topics cleared"),
                "\(forgot.stderr)")
            // Asked again, the broker keeps nothing for it (the same marker-ordered look: no clock).
            let again = try await HRMProcess.run(["team", url, "--no-config", "--forget", "oldpi"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("the broker keeps nothing for oldpi"), "\(again.stderr)")
            // The other host's retained status is still there, seen by mosquitto's own client.
            #expect(try await broker.retained("hrm/gym/status") == ["hrm/gym/status 1 online"])
        }
    }

    @Test func forgetRefusesAWildcard() async throws {
        let result = try await HRMProcess.run(["team", "mqtt://127.0.0.1:1", "--no-config", "--forget", "+"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--forget"), "\(result.stderr)")
    }
}
