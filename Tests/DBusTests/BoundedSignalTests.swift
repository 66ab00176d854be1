import DBus
import Testing

/// Signal streams are bounded: a consumer that falls behind keeps the newest signals and sees, in
/// their numbers, how many it lost.
@Suite struct BoundedSignalTests {
    static let flood: InterfaceName = "org.example.Flood"

    /// Sends `count` Tick signals numbered from 0, then waits for a round trip to the emitter:
    /// its reply comes after every signal it sent before it, and the client's connection hands
    /// out what arrives in order, so each of them has reached the client's streams.
    static func flood(_ count: Int, from emitter: Connection, to client: Connection) async throws {
        for i in 0..<count {
            try emitter.emitSignal(
                path: "/flood", interface: flood, member: "Tick", body: [.uint32(UInt32(i))])
        }
        _ = try await client.call(
            destination: emitter.uniqueName, path: "/", interface: .peer, member: "Ping")
    }

    @Test func aFloodPastTheBoundLeavesAGapTheConsumerSees() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let client = try await bus.connect()
            let keeping = 16
            let sent = 200
            let stream = try await client.signals(
                matching: MatchRule(sender: emitter.uniqueName, interface: Self.flood), keeping: keeping)
            // Nothing is read until every signal has arrived.
            try await Self.flood(sent, from: emitter, to: client)
            var gaps = SignalGaps()
            var missed: [UInt64] = []
            var ticks: [UInt32] = []
            var sequences: [UInt64] = []
            var iterator = stream.makeAsyncIterator()
            while ticks.count < keeping, let signal = await iterator.next() {
                missed.append(gaps.missed(before: signal.sequence))
                sequences.append(signal.sequence)
                ticks.append(try signal.element.decode(UInt32.self))
            }
            // The newest `keeping` were kept, numbered as they came; one gap before them says how
            // many went.
            #expect(sequences == Array(UInt64(sent - keeping + 1)...UInt64(sent)))
            #expect(ticks == Array(UInt32(sent - keeping)..<UInt32(sent)))
            #expect(missed == [UInt64(sent - keeping)] + Array(repeating: 0, count: keeping - 1))
            #expect(gaps.missedInAll == UInt64(sent - keeping))

            // A consumer that keeps up sees no gap.
            try await Self.flood(3, from: emitter, to: client)
            for expected in UInt32(0)..<3 {
                let signal = try #require(await iterator.next())
                #expect(gaps.missed(before: signal.sequence) == 0)
                #expect(try signal.element.decode(UInt32.self) == expected)
            }
            await client.close()
            await emitter.close()
        }
    }

    /// Only what the transform keeps is numbered: a signal it filters out is no gap.
    @Test func signalsATransformDropsAreNotNumbered() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let client = try await bus.connect()
            let evens = try await client.subscribe([
                MatchRule(sender: emitter.uniqueName, interface: Self.flood)
            ]) {
                message -> UInt32? in
                guard let tick = try? message.decode(UInt32.self), tick % 2 == 0 else { return nil }
                return tick
            }
            try await Self.flood(10, from: emitter, to: client)
            var kept: [Sequenced<UInt32>] = []
            var iterator = evens.makeAsyncIterator()
            while kept.count < 5, let signal = await iterator.next() { kept.append(signal) }
            #expect(kept.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(kept.map(\.element) == [0, 2, 4, 6, 8])
            await client.close()
            await emitter.close()
        }
    }

    @Test func gapsAreCountedFromTheNumbers() {
        var gaps = SignalGaps()
        #expect(gaps.missed(before: 1) == 0)
        #expect(gaps.missed(before: 5) == 3)
        #expect(gaps.missed(before: 6) == 0)
        // A number seen already (or older) is no gap and does not move back.
        #expect(gaps.missed(before: 4) == 0)
        #expect(gaps.last == 6)
        #expect(gaps.missedInAll == 3)
    }
}
