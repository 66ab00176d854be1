import BrokerSupport
import Testing

@testable import MQTT

/// The outbox alone: order, the window, acknowledgements, a lost link, overflow.
@Suite struct OutboxTests {
    private func message(_ number: Int, qos: MQTTQoS = .atLeastOnce) -> MQTTMessage {
        MQTTMessage(topic: "n", text: "\(number)", qos: qos)
    }

    private func numbers(_ batch: [(sequence: UInt64, message: MQTTMessage)]) -> [String] {
        batch.map { String(decoding: $0.message.payload, as: UTF8.self) }
    }

    @Test func handsInOrderWithinTheWindow() {
        var outbox = Outbox(capacity: 100)
        for number in 1...10 { #expect(outbox.append(message(number)) == 0) }
        let first = outbox.take(window: 4)
        #expect(numbers(first) == ["1", "2", "3", "4"])
        #expect(outbox.take(window: 4).isEmpty, "the window is full")
        for (index, entry) in first.enumerated() {
            outbox.published(sequence: entry.sequence, mid: Int32(index + 1))
        }
        outbox.acknowledge(mid: 1)
        outbox.acknowledge(mid: 2)
        #expect(outbox.count == 8)
        #expect(numbers(outbox.take(window: 4)) == ["5", "6"])
    }

    @Test func outOfOrderAcknowledgementKeepsOrder() {
        var outbox = Outbox(capacity: 100)
        for number in 1...3 { _ = outbox.append(message(number)) }
        let batch = outbox.take(window: 3)
        for (index, entry) in batch.enumerated() {
            outbox.published(sequence: entry.sequence, mid: Int32(index + 10))
        }
        outbox.acknowledge(mid: 12)
        #expect(outbox.count == 2)
        outbox.acknowledge(mid: 99)  // unknown: ignored
        #expect(outbox.count == 2)
        // The link drops: 1 and 2 go again, 3 (acknowledged) does not.
        outbox.linkLost()
        #expect(numbers(outbox.take(window: 3)) == ["1", "2"])
    }

    @Test func lostLinkSendsTheUnacknowledgedAgainInOrder() {
        var outbox = Outbox(capacity: 100)
        for number in 1...6 { _ = outbox.append(message(number)) }
        let batch = outbox.take(window: 4)
        for (index, entry) in batch.enumerated() {
            outbox.published(sequence: entry.sequence, mid: Int32(index + 1))
        }
        outbox.acknowledge(mid: 1)
        outbox.linkLost()
        outbox.acknowledge(mid: 2)  // a late ack from the old link's numbering means nothing now
        #expect(outbox.count == 5)
        #expect(numbers(outbox.take(window: 10)) == ["2", "3", "4", "5", "6"])
    }

    @Test func atMostOnceLeavesWhenHanded() {
        var outbox = Outbox(capacity: 100)
        _ = outbox.append(message(1, qos: .atMostOnce))
        _ = outbox.append(message(2))
        let batch = outbox.take(window: 10)
        outbox.published(sequence: batch[0].sequence, mid: 1)
        outbox.published(sequence: batch[1].sequence, mid: 2)
        #expect(outbox.count == 1)
        #expect(outbox.pending.map { String(decoding: $0.payload, as: UTF8.self) } == ["2"])
    }

    @Test func rejectedMessagesLeave() {
        var outbox = Outbox(capacity: 100)
        _ = outbox.append(MQTTMessage(topic: "bad/#", text: "x"))
        _ = outbox.append(message(2))
        let batch = outbox.take(window: 10)
        outbox.rejected(sequence: batch[0].sequence)
        #expect(outbox.count == 1)
    }

    @Test func overflowDropsTheOldest() {
        var outbox = Outbox(capacity: 5)
        var dropped = 0
        for number in 1...12 { dropped += outbox.append(message(number)) }
        #expect(dropped == 7)
        #expect(outbox.count == 5)
        #expect(numbers(outbox.take(window: 10)) == ["8", "9", "10", "11", "12"])
    }

    /// Entries dropped while handed: their late publish reports and acks are ignored, the rest
    /// keep their places.
    @Test func overflowWhileHanded() {
        var outbox = Outbox(capacity: 3)
        for number in 1...3 { _ = outbox.append(message(number)) }
        let batch = outbox.take(window: 2)
        #expect(outbox.append(message(4)) == 1)
        #expect(outbox.append(message(5)) == 1)
        outbox.published(sequence: batch[0].sequence, mid: 1)
        outbox.published(sequence: batch[1].sequence, mid: 2)
        outbox.acknowledge(mid: 1)
        #expect(outbox.count == 3)
        #expect(numbers(outbox.take(window: 2)) == ["3", "4"])
    }

    private func bpm(_ number: Int, topic: String = "hrm/a/bpm") -> MQTTMessage {
        MQTTMessage(topic: topic, text: "\(number)", qos: .atMostOnce, retain: true)
    }

    /// While the broker is away, a retained topic keeps only its last value waiting, in the place
    /// it was published; other topics and the measurements are untouched.
    @Test func aRetainedMessageReplacesTheWaitingOne() {
        var outbox = Outbox(capacity: 100)
        for number in 1...5 {
            _ = outbox.append(message(number))
            _ = outbox.append(bpm(100 + number))
            _ = outbox.append(bpm(200 + number, topic: "hrm/b/bpm"))
        }
        #expect(outbox.count == 7)
        #expect(numbers(outbox.take(window: 100)) == ["1", "2", "3", "4", "5", "105", "205"])
    }

    /// One already handed to the link is not taken back: the next one waits behind it.
    @Test func aHandedRetainedMessageIsNotReplaced() {
        var outbox = Outbox(capacity: 100)
        _ = outbox.append(bpm(1))
        let handed = outbox.take(window: 1)
        _ = outbox.append(bpm(2))
        _ = outbox.append(bpm(3))
        #expect(numbers(handed) == ["1"])
        #expect(numbers(outbox.take(window: 10)) == ["3"])
    }

    /// Replaced messages do not count against the capacity, and are swept out so that the
    /// storage stays bounded; the order survives the sweeps.
    @Test func replacedMessagesNeitherFillNorGrowTheOutbox() {
        var outbox = Outbox(capacity: 20)
        var dropped = 0
        for number in 1...1000 {
            dropped += outbox.append(bpm(number))
            if number % 100 == 0 { dropped += outbox.append(message(number)) }
        }
        #expect(dropped == 0)
        #expect(outbox.count == 11, "ten measurements and the last bpm")
        #expect(outbox.stored <= 2 * 20 + 2, "\(outbox.stored) stored")
        #expect(
            numbers(outbox.take(window: 100))
                == ["100", "200", "300", "400", "500", "600", "700", "800", "900", "1000", "1000"])
    }

    @Test func ringKeepsOrderAcrossGrowth() {
        var ring = Ring<Int>()
        var expected: [Int] = []
        for value in 0..<1000 {
            ring.append(value)
            expected.append(value)
            if value % 3 == 0 {
                #expect(ring.removeFirst() == expected.removeFirst())
            }
        }
        #expect(ring.count == expected.count)
        #expect((0..<ring.count).map { ring[$0] } == expected)
    }

    /// The hot path: a million appends to a full outbox stay O(1) each.
    @Test func appendIsConstantTime() {
        var outbox = Outbox(capacity: 10_000)
        let clock = ContinuousClock()
        let start = clock.now
        var dropped = 0
        let payload = MQTTMessage(topic: "hrm/x", text: "{\"bpm\":72}")
        for _ in 0..<200_000 { dropped += outbox.append(payload) }
        #expect(dropped == 190_000)
        #expect(clock.now - start < .seconds(5))
    }
}
