import ClockSupport
import HeartRate
import Synchronization
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// Collects what reaches it, in order (a sink that does its work at once, as stdout does).
final class CollectingSink: EventSink {
    private let events = Mutex<[MonitorEvent]>([])
    var received: [MonitorEvent] { events.withLock { $0 } }
    func receive(_ event: MonitorEvent) { events.withLock { $0.append(event) } }
    func finish() async {}
}

/// A slow sink that writes nothing until it is released: a stalled web client or disk.
final class StalledSink: SlowEventSink {
    private let state = Mutex<
        (written: [MonitorEvent], released: Bool, waiters: [CheckedContinuation<Void, Never>])
    >(
        ([], false, []))
    private let closedFlag = Mutex(false)
    var written: [MonitorEvent] { state.withLock { $0.written } }
    var closed: Bool { closedFlag.withLock { $0 } }

    func write(_ event: MonitorEvent) async throws {
        await withCheckedContinuation { continuation in
            let go = state.withLock { state -> Bool in
                if state.released { return true }
                state.waiters.append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
        state.withLock { $0.written.append(event) }
    }

    func release() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    func close() async { closedFlag.withLock { $0 = true } }
}

struct FailingSink: SlowEventSink {
    struct Broken: Error, CustomStringConvertible { var description: String { "disk full" } }
    func write(_ event: MonitorEvent) async throws { throw Broken() }
    func close() async {}
}

/// Records what a queued sink reported, and lets a test wait for it.
final class TroubleLog: Sendable {
    private let log = Mutex<[QueuedSink.Trouble]>([])
    let (reports, continuation) = AsyncStream.makeStream(of: QueuedSink.Trouble.self)
    var all: [QueuedSink.Trouble] { log.withLock { $0 } }
    func record(_ trouble: QueuedSink.Trouble) {
        log.withLock { $0.append(trouble) }
        continuation.yield(trouble)
    }
    func next() async -> QueuedSink.Trouble? {
        for await trouble in reports { return trouble }
        return nil
    }
}

func measurement(_ bpm: UInt8, device: String = "AA:BB:CC:DD:EE:FF") -> MonitorEvent {
    MonitorEvent.decoding([0x00, bpm], device: device)
}

func bpm(_ event: MonitorEvent) -> Int? {
    if case .measurement(let m, _) = event.kind { Int(m.heartRate) } else { nil }
}

@Suite struct PipelineTests {
    @Test func processorsRunInOrderBeforeEverySink() {
        final class Doubler: EventProcessor {
            func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
                emit(event)
                if let value = bpm(event) { emit(measurement(UInt8(value + 1))) }
            }
        }
        let stop = SessionStop()
        let counter = SessionCounter(limit: nil, stop: stop)
        let (first, second) = (CollectingSink(), CollectingSink())
        let pipeline = EventPipeline(processors: [Doubler(), counter], sinks: [first, second])
        pipeline.send(measurement(60))
        pipeline.send(measurement(70))
        #expect(first.received.compactMap(bpm) == [60, 61, 70, 71])
        #expect(second.received.compactMap(bpm) == [60, 61, 70, 71])
        #expect(counter.current.measurements == 4, "the counter comes after the doubler")
    }

    @Test func theCounterStopsTheSessionAndSwallowsLateMeasurements() {
        let stop = SessionStop()
        let counter = SessionCounter(limit: 2, stop: stop)
        let sink = CollectingSink()
        let pipeline = EventPipeline(processors: [counter], sinks: [sink])
        pipeline.send(measurement(60))
        #expect(stop.reason == nil)
        pipeline.send(MonitorEvent.decoding([0x10, 60, 0x01], device: "AA:BB:CC:DD:EE:FF"))
        pipeline.send(measurement(61))
        #expect(stop.reason == .countReached)
        pipeline.send(measurement(62))
        #expect(sink.received.compactMap(bpm) == [60, 61])
        #expect(counter.current == SessionCounter.Counts(measurements: 2, malformed: 1))
        #expect(counter.summary == "2 measurements, 1 malformed notification skipped")
    }

    @Test func theFirstStopReasonIsKept() async {
        let stop = SessionStop()
        let result = await stop.run {
            stop.stop(.outputClosed)
            stop.stop(.interrupted)
            // The cancellation comes from a task of its own: wait for it (a minute at most).
            try? await Task.sleep(for: .seconds(60))
            return Task.isCancelled
        }
        #expect(result, "stop cancels the session's task")
        #expect(stop.reason == .outputClosed)
    }

    /// `stop` is called under locks (the pipeline's, the notify session's) that the session's
    /// cancellation handlers may take: it must not run them on the caller's thread.
    @Test(.timeLimit(.minutes(1))) func stopUnderALockTheSessionNeedsDoesNotDeadlock() async {
        let lock = Mutex(0)
        let waiting = Mutex<(CheckedContinuation<Void, Never>?, cancelled: Bool)>((nil, false))
        let (ready, isReady) = AsyncStream.makeStream(of: Void.self)
        let stop = SessionStop()
        async let ended: Void = stop.run {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let cancelled = waiting.withLock { state -> Bool in
                        state.0 = continuation
                        return state.cancelled
                    }
                    if cancelled { continuation.resume() }
                    isReady.finish()
                }
            } onCancel: {
                // As StopNotify's detach does when the notification stream is cancelled.
                lock.withLock { $0 += 1 }
                let continuation = waiting.withLock { state in
                    state.cancelled = true
                    defer { state.0 = nil }
                    return state.0
                }
                continuation?.resume()
            }
        }
        for await _ in ready {}
        // As a notification's delivery does: the count is reached while the lock is held. Were
        // the handler run here, it would wait for this lock forever.
        lock.withLock { _ in stop.stop(.countReached) }
        await ended
        #expect(lock.withLock { $0 } == 1, "the session was cancelled, and its handler ran")
        #expect(stop.reason == .countReached)
    }

    @Test func batteryEventsOnlyAfterInfoAndOnlyChanges() {
        let sink = CollectingSink()
        let pipeline = EventPipeline(processors: [BatteryChanges()], sinks: [sink])
        let device = "AA:BB:CC:DD:EE:FF"
        func battery(_ percent: Int) {
            pipeline.send(MonitorEvent(device: device, kind: .battery(percent: percent)))
        }
        battery(90)
        pipeline.send(
            MonitorEvent(
                device: device,
                kind: .info(name: "H10", location: nil, battery: 87, manufacturer: nil, model: nil)))
        battery(87)
        battery(86)
        battery(86)
        battery(85)
        let levels = sink.received.compactMap { event -> Int? in
            if case .battery(let percent) = event.kind { percent } else { nil }
        }
        #expect(levels == [86, 85])
    }

    /// A sink that stops writing must not delay the stream or the other sinks.
    @Test func aStalledSinkDelaysNothing() async {
        let stalled = StalledSink()
        let troubles = TroubleLog()
        let queued = QueuedSink(stalled, capacity: 100, policy: .dropOldest, trouble: troubles.record)
        queued.start()
        let direct = CollectingSink()
        let pipeline = EventPipeline(processors: [], sinks: [queued, direct])
        for i in 0..<10_000 { pipeline.send(measurement(UInt8(i % 200))) }
        #expect(
            direct.received.count == 10_000, "every event reached the direct sink while the other stalled")
        stalled.release()
        await queued.finish(timeout: .seconds(10))
        // At most one batch was being written and 100 waited; every other event is reported as
        // dropped: none is lost without a word.
        let dropped = troubles.all.reduce(0) { total, trouble in
            if case .dropped(let count) = trouble { total + count } else { total }
        }
        #expect((100...200).contains(stalled.written.count))
        #expect(stalled.written.count + dropped == 10_000)
        #expect(stalled.written.last.flatMap(bpm) == 9_999 % 200)
        #expect(stalled.closed)
    }

    /// A session ends in a cancelled task (its stop cancels it): finishing from there still
    /// waits for the sink to write what waits (the last lines of a recording) and close.
    @Test(.timeLimit(.minutes(1))) func finishingFromACancelledTaskWaitsForTheSink() async {
        let clock = ManualClock()
        let stalled = StalledSink()
        let queued = QueuedSink(stalled, capacity: 10, policy: .dropOldest, clock: clock) { _ in }
        queued.start()
        queued.receive(measurement(70))
        let finishing = Task { await queued.finish(timeout: .seconds(20)) }
        finishing.cancel()
        // finish's timeout sleeps: its wait was not ended by the cancellation (a cancelled sleep
        // never starts). The clock never moves, so only the sink's end can end that wait.
        #expect(await clock.sleepers(1))
        #expect(!stalled.closed)
        stalled.release()
        await finishing.value
        #expect(stalled.written.count == 1)
        #expect(stalled.closed)
        #expect(clock.now.offset == .zero)
    }

    @Test func aSinkThatCannotKeepUpIsDropped() async {
        let stalled = StalledSink()
        let troubles = TroubleLog()
        let queued = QueuedSink(stalled, capacity: 10, policy: .dropSink, trouble: troubles.record)
        queued.start()
        let pipeline = EventPipeline(processors: [], sinks: [queued])
        for i in 0..<50 { pipeline.send(measurement(UInt8(i))) }
        stalled.release()
        #expect(await troubles.next() == .sinkDropped)
        await queued.finish(timeout: .seconds(10))
        #expect(stalled.written.count <= 1, "nothing after the overflow")
        #expect(troubles.all == [.sinkDropped])
    }

    @Test func aFailingSinkIsReportedOnceAndTheRestGoesOn() async {
        let troubles = TroubleLog()
        let queued = QueuedSink(FailingSink(), capacity: 10, policy: .dropOldest, trouble: troubles.record)
        queued.start()
        let direct = CollectingSink()
        let pipeline = EventPipeline(processors: [], sinks: [queued, direct])
        pipeline.send(measurement(60))
        #expect(await troubles.next() == .failed("disk full"))
        pipeline.send(measurement(61))
        await queued.finish(timeout: .seconds(10))
        #expect(direct.received.count == 2)
        #expect(troubles.all == [.failed("disk full")])
    }

    /// finish waits for a stuck sink no longer than it was told to.
    @Test(.timeLimit(.minutes(1))) func finishGivesUpOnAStuckSink() async {
        let clock = ManualClock()
        let stalled = StalledSink()
        let queued = QueuedSink(stalled, capacity: 10, policy: .dropOldest, clock: clock, trouble: { _ in })
        queued.start()
        queued.receive(measurement(60))
        let finishing = Task { await queued.finish(timeout: .seconds(5)) }
        #expect(await clock.sleepers(1))
        clock.advance(by: .milliseconds(4_999))
        #expect(clock.sleeping == 1, "still waiting for the sink")
        clock.advance(by: .milliseconds(1))
        await finishing.value
        #expect(stalled.written.isEmpty)
        #expect(!stalled.closed)
        stalled.release()
    }
}

/// `hrm serve`'s order on a stop: the clients are closed (whenStopped, awaited) before the
/// session's task is cancelled, which is what lets the strap go.
/// QueuedSink's queue: dropping the oldest keeps the order of what waits, across the cut-offs
/// of the dropped front.
@Suite struct EventQueueTests {
    @Test func dropOldestKeepsTheNewestInOrder() {
        var queue = EventQueue()
        let capacity = 4
        for value in 0..<250 {
            if queue.count == capacity { queue.removeFirst() }
            queue.append(measurement(UInt8(value)))
            #expect(queue.waiting.compactMap(bpm) == Array(max(0, value - capacity + 1)...value))
        }
        queue.removeAll(keepingCapacity: true)
        #expect(queue.isEmpty && queue.waiting.isEmpty)
    }
}

@Suite struct SessionStopOrderTests {
    @Test(.timeLimit(.minutes(1))) func whenStoppedRunsToItsEndBeforeTheCancellation() async {
        let steps = Entries<String>()
        let (closing, closingStarted) = AsyncStream.makeStream(of: Void.self)
        let (opened, open) = AsyncStream.makeStream(of: Void.self)
        let stop = SessionStop(whenStopped: {
            steps.add("closing clients")
            closingStarted.finish()
            // Held until the test has seen it start: a cancellation that did not wait for it
            // would be logged first.
            for await _ in opened {}
            steps.add("clients closed")
        })
        async let result = stop.run { () async -> Int in
            stop.stop(.interrupted)
            await Self.cancellation { steps.add("strap let go") }
            return 7
        }
        for await _ in closing {}
        #expect(steps.all == ["closing clients"])
        open.finish()
        #expect(await result == 7)
        #expect(steps.all == ["closing clients", "clients closed", "strap let go"])
    }

    /// Waits until the task is cancelled; `cancelled` runs in the cancellation handler, so what it
    /// logs is logged at the moment of the cancellation.
    static func cancellation(_ cancelled: @escaping @Sendable () -> Void) async {
        let waiting = Mutex<(CheckedContinuation<Void, Never>?, done: Bool)>((nil, false))
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = waiting.withLock { state -> Bool in
                    if state.done { return true }
                    state.0 = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            cancelled()
            let continuation = waiting.withLock { state in
                state.done = true
                defer { state.0 = nil }
                return state.0
            }
            continuation?.resume()
        }
    }
}
