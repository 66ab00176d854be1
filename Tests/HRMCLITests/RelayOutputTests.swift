import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs

/// The relay's pure parts: who is a consumer, whose subscription it is, the JSON and text lines,
/// and the command line.
@Suite struct RelayOutputTests {
    @Test func theStrapIsNeverAConsumerAndComingsAndGoingsAreInOrder() {
        var links = RelayLinks()
        let strap = links.relays("D2:4B:7E:10:20:30")
        let other = links.relays("D2:4B:7E:10:20:31")
        #expect(strap)
        #expect(!other, "only the first strap is relayed")
        let first = links.update(["D2:4B:7E:10:20:30", "C0:FF:EE:00:00:02", "C0:FF:EE:00:00:01"])
        #expect(first.map(\.0) == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
        #expect(first.allSatisfy { $0.1 })
        #expect(links.centrals == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
        let second = links.update(["C0:FF:EE:00:00:02"])
        #expect(second.map(\.0) == ["C0:FF:EE:00:00:01"] && second.allSatisfy { !$0.1 })
        #expect(links.centrals == ["C0:FF:EE:00:00:02"])
        let same = links.update(["C0:FF:EE:00:00:02"])
        #expect(same.isEmpty)
    }

    @Test func relayLines() {
        let time = Timestamp(millisecondsSinceEpoch: 1_795_335_429_123)
        let connected = MonitorEvent(
            time: time, device: nil, kind: .relay(.consumerConnected, consumer: "C0:FF:EE:00:00:01"))
        #expect(
            MonitorEventJSON.line(connected)
                == #"{"type":"relay","time":"2026-11-22T08:17:09.123Z","state":"consumer_connected","consumer":"C0:FF:EE:00:00:01"}"#
        )
        let unsubscribed = MonitorEvent(time: time, device: nil, kind: .relay(.unsubscribed, consumer: nil))
        #expect(
            MonitorEventJSON.line(unsubscribed)
                == #"{"type":"relay","time":"2026-11-22T08:17:09.123Z","state":"unsubscribed"}"#)
        #expect(
            WatchText.relay(.subscribed, "C0:FF:EE:00:00:01")
                == "relay: consumer C0:FF:EE:00:00:01 subscribed")
        #expect(WatchText.relay(.unsubscribed, nil) == "relay: the last consumer unsubscribed")
        #expect(
            WatchText.relay(.consumerDisconnected, "C0:FF:EE:00:00:02")
                == "relay: consumer C0:FF:EE:00:00:02 disconnected")
    }

    @Test func relayOptions() throws {
        let plain = try WatchCommand.parse(["Polar"])
        #expect(plain.arguments.outputs.requested.isEmpty)
        let relayed = try WatchCommand.parse([
            "--relay", "--relay-adapter", "hci1", "--relay-name", "Bike HR",
        ])
        let output = try #require(relayed.arguments.outputs.requested.first as? RelayOutput)
        #expect(output.settings == RelaySettings(adapter: "hci1", name: "Bike HR"))
        #expect(throws: (any Error).self) { try WatchCommand.parse(["--relay", "--relay-name", ""]) }
        let command = try RelayCommand.parse(["--relay-name", "Bike HR", "Polar"])
        #expect(command.arguments.outputs.relay.relayName == "Bike HR")
        for name in ["record", "serve"] {
            _ = try HRM.parseAsRoot([name, "--relay"])
        }
    }

    /// A run of values bluetoothd did not take is said when it begins and, with how many were
    /// lost, when it ends; values taken meanwhile say nothing.
    @Test func aStallOfBluetoothdIsSaidOnceAndCountedWhenItEnds() {
        var backlog = RelayBacklog()
        let sent = [true, false, false, false, true, true, false, true]
        let changes = sent.map { backlog.record(sent: $0) }
        #expect(changes == [nil, .stalled, nil, nil, .resumed(lost: 3), nil, .stalled, .resumed(lost: 1)])
    }
}
