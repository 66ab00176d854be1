import Synchronization

/// A sink whose work may be slow (a file, a network client): it runs on a task of its own,
/// never on the thread that sends events.
package protocol SlowEventSink: Sendable {
    /// Writes one event. Throwing ends the sink (`close` is still called).
    func write(_ event: MonitorEvent) async throws
    /// No more events: flush and release what the sink holds.
    func close() async
    /// The batch taken from the queue is written: a sink that buffers writes it out now.
    func flush() async
}

extension SlowEventSink {
    package func flush() async {}
}

/// Puts a bounded queue between the pipeline and a `SlowEventSink`, so that nothing the sink
/// does can delay the strap's stream or another sink: `receive` only appends to the queue.
/// When the queue is full, `policy` says what gives. The sink's task takes what waits in one
/// batch, so at most `capacity` events wait while at most `capacity` more are being written.
package final class QueuedSink: EventSink {
    package enum Policy: Sendable {
        /// The sink is dropped, as a web client that cannot keep up is (it may come back).
        case dropSink
        /// The oldest waiting events are dropped, and how many is reported once the sink takes
        /// events again: for a sink that must go on (a recording).
        case dropOldest
    }

    /// What happened to the queue, for the session to tell the user.
    package enum Trouble: Sendable, Equatable {
        /// `.dropOldest`: this many events were dropped since the last report.
        case dropped(Int)
        /// `.dropSink`: the queue filled up and the sink was dropped.
        case sinkDropped
        /// The sink's `write` threw: it gets no more events.
        case failed(String)
    }

    private let queue = Queue()
    private let capacity: Int
    private let policy: Policy
    /// Finishes when the sink's task is done.
    private let done: AsyncStream<Void>
    /// The sink's task: started by `start` (the session's), awaited by `finish`, cancelled when
    /// it is still stuck after finish's timeout.
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// What the task does: drains the queue into the sink, then closes it.
    private let work: @Sendable () async -> Void
    /// What `gather` and `finish`'s timeout wait on: a test's clock, or the continuous one.
    private let clock: any Clock<Duration>

    /// `trouble` is called on the sink's own task, never under the pipeline's lock, so it may
    /// send an event into the pipeline. With `gather`, the sink's task, once woken by an event,
    /// waits that long for more before it writes: one wake-up for a batch instead of one per
    /// event, for a sink that may lag a little (a recording).
    package init(
        _ sink: some SlowEventSink, capacity: Int, policy: Policy, gather: Duration = .zero,
        clock: any Clock<Duration> = ContinuousClock(), trouble: @escaping @Sendable (Trouble) -> Void
    ) {
        precondition(capacity > 0, "a queue needs room for one event")
        self.capacity = capacity
        self.policy = policy
        self.clock = clock
        let (done, finished) = AsyncStream.makeStream(of: Void.self)
        self.done = done
        work = { [queue] in
            await queue.drain(into: sink, gather: gather, clock: clock, trouble)
            await sink.close()
            finished.finish()
        }
    }

    /// Starts the sink's task (once); events received before wait in the queue.
    package func start() {
        task.withLock { task in
            if task == nil { task = Task(operation: work) }
        }
    }

    /// The sink's task waits for an event: a test starts from there.
    package var idle: Bool { queue.state.withLock { $0.waiting != nil } }

    package func receive(_ event: MonitorEvent) {
        let waiting = queue.state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.ended else { return nil }
            if state.queue.count < capacity {
                state.queue.append(event)
            } else if policy == .dropOldest {
                state.queue.removeFirst()
                state.queue.append(event)
                state.dropped += 1
            } else {
                state.queue.removeAll()
                state.overflowed = true
                state.ended = true
            }
            return state.wake()
        }
        waiting?.resume()
    }

    /// Ends the queue; the sink writes what is waiting and closes, for 5 s at most.
    package func finish() async {
        await finish(timeout: .seconds(5))
    }

    /// Ends the queue and waits, for `timeout` at most, until the sink has written what was
    /// waiting and closed. A sink still stuck after that is left to itself.
    package func finish(timeout: Duration) async {
        // A session that ended before it started (a failure at once) still closes the sink.
        start()
        let waiting = queue.state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.ended = true
            return state.wake()
        }
        waiting?.resume()
        let (done, clock) = (self.done, self.clock)
        // Detached: a session ends in a cancelled task (the stop cancels it), and a cancelled
        // task's wait would end at once, before the sink wrote its last events.
        await Task.detached {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in done {} }
                group.addTask { try? await clock.sleep(for: timeout) }
                await group.next()
                group.cancelAll()
            }
        }.value
        // Still stuck: told to stop, and left (hrm's exit must not wait on a stuck disk).
        task.withLock { $0 }?.cancel()
    }

}

/// The events waiting for a `QueuedSink`'s sink, and its task's side of them.
private final class Queue: Sendable {
    package struct State {
        /// `.dropOldest` at capacity removes the first in O(1), under the pipeline's send.
        package var queue = EventQueue()
        /// Events dropped (`.dropOldest`) and not reported yet.
        package var dropped = 0
        /// The queue overflowed under `.dropSink`.
        package var overflowed = false
        /// No more events will be taken.
        package var ended = false
        package var waiting: CheckedContinuation<Void, Never>? = nil

        package var hasWork: Bool { !queue.isEmpty || ended || dropped > 0 }

        /// The sink's task, if it is waiting for work and there is some now.
        package mutating func wake() -> CheckedContinuation<Void, Never>? {
            guard hasWork, let waiting else { return nil }
            self.waiting = nil
            return waiting
        }
    }

    package let state = Mutex(State())

    /// The sink's task: takes everything queued at once, writes it, waits for more, until the
    /// queue has ended and is empty, the sink was dropped, or a write failed.
    package func drain(
        into sink: some SlowEventSink, gather: Duration, clock: any Clock<Duration>,
        _ trouble: @Sendable (QueuedSink.Trouble) -> Void
    ) async {
        while true {
            let (batch, dropped, overflowed, ended) = await take(gather: gather, clock: clock)
            if overflowed { return trouble(.sinkDropped) }
            if dropped > 0 { trouble(.dropped(dropped)) }
            for event in batch {
                do {
                    try await sink.write(event)
                } catch {
                    state.withLock { state in
                        state.ended = true
                        state.queue.removeAll()
                    }
                    return trouble(.failed("\(error)"))
                }
            }
            await sink.flush()
            if ended && batch.isEmpty { return }
        }
    }

    private func take(gather: Duration, clock: any Clock<Duration>) async -> ([MonitorEvent], Int, Bool, Bool)
    {
        while true {
            let taken = state.withLock { state -> ([MonitorEvent], Int, Bool, Bool)? in
                guard state.hasWork else { return nil }
                defer {
                    state.queue.removeAll(keepingCapacity: true)
                    state.dropped = 0
                }
                return (Array(state.queue.waiting), state.dropped, state.overflowed, state.ended)
            }
            if let taken { return taken }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.hasWork { return true }
                    state.waiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            let ending = state.withLock { $0.ended }
            if gather > .zero, !ending { try? await clock.sleep(for: gather) }
        }
    }
}

/// Events oldest first, in an Array read from `head` on. Dropping the oldest moves `head` (O(1));
/// the dropped front is cut off once it is as long as what waits, so each event is moved at most
/// once (amortised O(1)): no copy per event, and no collections library in `hrm watch`.
package struct EventQueue {
    private var events: [MonitorEvent] = []
    private var head = 0

    /// The events waiting, oldest first.
    package var waiting: ArraySlice<MonitorEvent> { events[head...] }
    package var count: Int { events.count - head }
    package var isEmpty: Bool { count == 0 }

    package mutating func append(_ event: MonitorEvent) { events.append(event) }

    /// Drops the oldest waiting event (there must be one).
    package mutating func removeFirst() {
        head += 1
        if head >= count {
            events.removeFirst(head)
            head = 0
        }
    }

    package mutating func removeAll(keepingCapacity: Bool = false) {
        events.removeAll(keepingCapacity: keepingCapacity)
        head = 0
    }
}
