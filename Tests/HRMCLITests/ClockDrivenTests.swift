import BrokerSupport
import ClockSupport
import Synchronization
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// What tasks log, in the order they logged it.
final class Entries<Entry: Sendable>: Sendable {
    private let entries = Mutex<[Entry]>([])
    var all: [Entry] { entries.withLock { $0 } }
    func add(_ entry: Entry) { entries.withLock { $0.append(entry) } }
}

/// The manual clock the tests below drive: it wakes sleepers only when moved, in deadline order,
/// and a cancelled sleeper at once.
@Suite(.timeLimit(.minutes(1))) struct ManualClockTests {
    @Test func wakesSleepersOnlyWhenMovedAndInDeadlineOrder() async throws {
        let clock = ManualClock()
        let woken = Entries<Int>()
        let tasks = [3, 1, 2].map { seconds in
            Task {
                try await clock.sleep(until: .init(offset: .seconds(seconds)), tolerance: nil)
                woken.add(seconds)
                return clock.now
            }
        }
        #expect(await clock.sleepers(3))
        #expect(clock.deadlines.map(\.offset) == [.seconds(1), .seconds(2), .seconds(3)])
        #expect(clock.advance(by: .milliseconds(999)) == 0)
        #expect(clock.sleeping == 3)
        #expect(clock.advance(by: .seconds(5)) == 3)
        #expect(clock.now.offset == .milliseconds(5_999))
        for task in tasks { _ = try await task.value }
        // Each was resumed in turn; the order they then ran in is the scheduler's.
        #expect(woken.all.sorted() == [1, 2, 3])
        #expect(clock.sleeping == 0)
    }

    @Test func aPastDeadlineReturnsAtOnceAndCancellingEndsASleep() async {
        let clock = ManualClock()
        clock.advance(by: .seconds(2))
        await #expect(throws: Never.self) {
            try await clock.sleep(until: .init(offset: .seconds(1)), tolerance: nil)
        }
        let sleeping = Task { try await clock.sleep(for: .seconds(60)) }
        #expect(await clock.sleepers(1))
        sleeping.cancel()
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(clock.sleeping == 0)
        #expect(clock.now.offset == .seconds(2), "cancelling moved nothing")
    }

    @Test func waitingForSleepersGivesUpAtItsDeadline() async {
        let clock = ManualClock()
        #expect(await clock.sleepers(1, within: .milliseconds(1)) == false)
        #expect(await clock.sleepers(0))
    }
}

/// `--duration`: the session stops when the clock reaches `start + duration`, not before.
@Suite(.timeLimit(.minutes(1))) struct RunLimitsTimerTests {
    @Test func stopsTheSessionAtItsDurationFromTheStart() async throws {
        let clock = ManualClock()
        let stop = SessionStop()
        let start = clock.now
        // Scanning and connecting took 4 s: they count.
        clock.advance(by: .seconds(4))
        let timer = try #require(RunLimits(duration: try Seconds(10)).timer(from: start, on: clock, stop))
        #expect(await clock.sleepers(1))
        #expect(clock.deadlines.map(\.offset) == [.seconds(10)])
        clock.advance(by: .milliseconds(5_999))
        #expect(stop.reason == nil)
        #expect(clock.sleeping == 1)
        clock.advance(by: .milliseconds(1))
        await timer.value
        #expect(stop.reason == .durationReached)
    }

    @Test func aCancelledTimerStopsNothing() async throws {
        let clock = ManualClock()
        let stop = SessionStop()
        let timer = try #require(RunLimits(duration: try Seconds(1)).timer(from: clock.now, on: clock, stop))
        #expect(await clock.sleepers(1))
        timer.cancel()
        await timer.value
        clock.advance(by: .seconds(2))
        #expect(stop.reason == nil)
        #expect(RunLimits().timer(from: clock.now, on: clock, stop) == nil, "no --duration, no timer")
    }
}

/// Reconnect delays slept on a clock: each sleep lasts the next delay, exactly.
@Suite(.timeLimit(.minutes(1))) struct BackoffSleepTests {
    @Test func eachSleepLastsTheNextDelay() async throws {
        let clock = ManualClock()
        let sleeper = Task {
            var backoff = Backoff()
            try await backoff.sleep(on: clock)
            let first = clock.now
            try await backoff.sleep(on: clock)
            return (first, clock.now)
        }
        #expect(await clock.sleepers(1))
        clock.advance(by: .milliseconds(499))
        #expect(clock.sleeping == 1, "half a second is not over")
        clock.advance(by: .milliseconds(1))
        // The second sleep starts at 0.5 s and lasts 1 s.
        #expect(await clock.sleepers(1))
        #expect(clock.deadlines.map(\.offset) == [.milliseconds(1_500)])
        clock.advance(by: .seconds(1))
        let (first, second) = try await sleeper.value
        #expect(first.offset == .milliseconds(500))
        #expect(second.offset == .milliseconds(1_500))
    }
}

/// A stream's deadline and its ticks, on a clock the test moves.
@Suite(.timeLimit(.minutes(1))) struct StreamDeadlineTests {
    @Test func untilEndsTheStreamAtTheDeadline() async {
        let clock = ManualClock()
        let (stream, source) = AsyncStream.makeStream(of: Int.self)
        var limited = stream.until(clock.now.advanced(by: .seconds(3)), on: clock).makeAsyncIterator()
        source.yield(1)
        #expect(await limited.next() == 1)
        #expect(await clock.sleepers(1))
        clock.advance(by: .milliseconds(2_999))
        #expect(clock.sleeping == 1)
        clock.advance(by: .milliseconds(1))
        #expect(await limited.next() == nil, "the stream ended though its source did not")
        source.finish()
    }

    @Test func ticksOnlyWhenTheIntervalHasPassed() async {
        let clock = ManualClock()
        let (stream, source) = AsyncStream.makeStream(of: Int.self)
        var ticked = stream.ticking(every: .milliseconds(250), on: clock).makeAsyncIterator()
        source.yield(7)
        guard case .element(7) = await ticked.next() else {
            Issue.record("the element comes through first")
            return
        }
        for round in 1...3 {
            #expect(await clock.sleepers(1))
            #expect(clock.deadlines.map(\.offset) == [.milliseconds(250 * round)])
            clock.advance(by: .milliseconds(249))
            #expect(clock.sleeping == 1)
            clock.advance(by: .milliseconds(1))
            guard case .tick = await ticked.next() else {
                Issue.record("a tick after 250 ms")
                return
            }
        }
        source.finish()
    }
}

/// A sink that records its batches: the events written between two flushes.
final class BatchingSink: SlowEventSink {
    private let state = Mutex<(current: [Int], batches: [[Int]])>(([], []))
    let (flushes, flushed) = AsyncStream.makeStream(of: Void.self)
    var batches: [[Int]] { state.withLock { $0.batches } }
    func write(_ event: MonitorEvent) async throws {
        state.withLock { $0.current += bpm(event).map { [$0] } ?? [] }
    }
    func flush() async {
        state.withLock { state in
            if !state.current.isEmpty { state.batches.append(state.current) }
            state.current = []
        }
        flushed.yield()
    }
    func close() async {}
}

/// QueuedSink's `gather`: once an event wakes the sink's task, it waits that long for more and
/// writes them as one batch.
@Suite(.timeLimit(.minutes(1))) struct QueuedSinkGatherTests {
    /// Until `condition` holds (BrokerSupport's deadline only proves "not hung").
    static func until(_ condition: () -> Bool) async -> Bool {
        await eventually(condition)
    }

    @Test func eventsWithinTheGatherAreOneBatch() async {
        let clock = ManualClock()
        let sink = BatchingSink()
        let queued = QueuedSink(
            sink, capacity: 10, policy: .dropOldest, gather: .milliseconds(50), clock: clock,
            trouble: { _ in })
        queued.start()
        var flushes = sink.flushes.makeAsyncIterator()
        // An event that finds the task busy is taken without a gather: start from a waiting task.
        #expect(await Self.until { queued.idle })
        queued.receive(measurement(60))
        #expect(await clock.sleepers(1), "the first event starts the gather")
        queued.receive(measurement(61))
        queued.receive(measurement(62))
        clock.advance(by: .milliseconds(49))
        #expect(clock.sleeping == 1)
        #expect(sink.batches.isEmpty, "nothing is written while it gathers")
        clock.advance(by: .milliseconds(1))
        _ = await flushes.next()
        #expect(sink.batches == [[60, 61, 62]])
        // The next event starts a gather of its own.
        queued.receive(measurement(63))
        #expect(await clock.sleepers(1))
        clock.advance(by: .milliseconds(50))
        _ = await flushes.next()
        #expect(sink.batches == [[60, 61, 62], [63]])
        await queued.finish(timeout: .seconds(30))
    }
}
