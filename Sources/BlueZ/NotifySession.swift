import DBus
import Dispatch
import Synchronization

/// A StartNotify session's values, in the order bluetoothd sent them, from the client's mirror
/// to the stream of the moment (or its `inline` handler) through a bounded queue: held while there
/// is no stream (between a drop and the next stream), so that nothing bluetoothd sends after
/// re-enabling the session on reconnect is lost.
///
/// The mirror's task only appends to the queue; a task of the session's own takes from it and
/// delivers, outside the lock. So a consumer that blocks (`inline` stuck in a write to a full
/// stdout) holds up nothing but its own deliveries: when the queue is full the oldest value gives
/// way, the count is reported (`.dropped`) before the next value delivered, and ending the stream
/// (the consumer's task cancelled, `releaseNotifications`) does not wait for the blocked handler.
final class NotifySession: Sendable {
    /// Values waiting at most, beyond which the oldest is dropped: 1.3 s at 200 notifications a
    /// second, over 4 minutes at a strap's 1 Hz.
    static let capacity = 256

    enum Item: Sendable {
        case value([UInt8])
        case wrongType(signature: String, value: String)
        /// The link dropped: the stream attached as `epoch` ends here.
        case linkDropped(epoch: Int)

        var isNotification: Bool {
            if case .linkDropped = self { false } else { true }
        }
    }

    private struct State {
        var consumer: AsyncStream<NotificationEvent>.Continuation? = nil
        var inline: (@Sendable ([UInt8]) -> Void)? = nil
        /// Counts the streams attached, so that a drop meant for one never ends the next.
        var epoch = 0
        var queue = ItemQueue()
        /// Notifications dropped and not reported yet, and in all (for tests).
        var dropped = 0
        var droppedInAll = 0
        /// The number of the last Value signal seen (see `ValueNumbers`): a number skipped is a
        /// notification the mirror's stream dropped.
        var lastNumber: UInt64

        init(lastNumber: UInt64) { self.lastNumber = lastNumber }

        /// Counts as dropped the Value signals numbered between the last one and `number`.
        mutating func count(_ number: UInt64) {
            guard number > lastNumber else { return }
            let missed = Int(clamping: number - lastNumber - 1)
            lastNumber = number
            dropped += missed
            droppedInAll += missed
        }
        var closed = false
        /// The pump waits, or is about to: the next item must wake it (once).
        var pumpWaiting = false
        /// ReadValue calls on their way, and the values that arrived meanwhile (one of them may
        /// be a read's echo).
        var reads = 0
        var duringReads: [[UInt8]] = []
        /// Values read whose echo has not come through the pump yet, with when they were read:
        /// the echo is dropped when it comes (within a second; after that it was not sent).
        var echoes: [(value: [UInt8], at: ContinuousClock.Instant)] = []

        /// Appends `item`, dropping the oldest notification when `capacity` are waiting.
        mutating func enqueue(_ item: Item, capacity: Int) {
            if item.isNotification && queue.notifications >= capacity {
                queue.dropOldestNotification()
                dropped += 1
                droppedInAll += 1
            }
            queue.append(item)
        }

        /// Whether the pump must be woken for what was just queued (each wait, woken once).
        mutating func wake() -> Bool {
            defer { pumpWaiting = false }
            return pumpWaiting
        }
    }

    let device: ObjectPath
    private let capacity: Int
    private let state: Mutex<State>
    private let doorbell = DispatchSemaphore(value: 0)

    /// Starts the pump: a thread of its own, as the notify socket's reader has, so that a handler
    /// that blocks holds neither the client's actor nor one of the few threads of the pool.
    /// `numberedFrom`: the number of the characteristic's last Value signal before the session.
    init(device: ObjectPath, numberedFrom: UInt64 = 0, capacity: Int = NotifySession.capacity)
        throws(BlueZError)
    {
        self.device = device
        self.capacity = capacity
        state = Mutex(State(lastNumber: numberedFrom))
        try DetachedThread.start("StartNotify session's delivery", named: "hrm-notify-pump") {
            [weak self, doorbell] in
            // No reference to the session is held while waiting: one never closed still goes.
            while true {
                switch self?.pump() ?? .exit {
                case .again: continue
                case .wait: doorbell.wait()
                case .exit: return
                }
            }
        }
    }

    deinit { close() }

    /// Values waiting to be delivered (a test's window on the bound).
    var queued: Int { state.withLock { $0.queue.notifications } }
    /// Values dropped because the consumer did not keep up, since the session began.
    var droppedInAll: Int { state.withLock { $0.droppedInAll } }

    func attach(
        _ consumer: AsyncStream<NotificationEvent>.Continuation, inline: (@Sendable ([UInt8]) -> Void)?
    ) {
        let wake = state.withLock { state in
            state.epoch += 1
            state.consumer = consumer
            state.inline = inline
            return state.wake()
        }
        if wake { doorbell.signal() }
    }

    /// The consumer stopped listening (a stream finished by a drop never calls this). A delivery
    /// under way is not waited for.
    func detach() {
        state.withLock { state in
            state.consumer = nil
            state.inline = nil
        }
    }

    /// A value, the Value signal numbered `number` (see `ValueNumbers`).
    func deliver(_ bytes: [UInt8], number: UInt64) {
        let wake = state.withLock { state -> Bool in
            state.count(number)
            let now = ContinuousClock.now
            if !state.echoes.isEmpty {
                state.echoes.removeAll { now - $0.at > .seconds(1) }
                if let echo = state.echoes.firstIndex(where: { $0.value == bytes }) {
                    state.echoes.remove(at: echo)
                    return false
                }
            }
            if state.reads > 0 {
                if state.duringReads.count >= capacity {
                    state.duringReads.removeFirst()
                    state.dropped += 1
                    state.droppedInAll += 1
                }
                state.duringReads.append(bytes)
                return false
            }
            state.enqueue(.value(bytes), capacity: capacity)
            return state.wake()
        }
        if wake { doorbell.signal() }
    }

    /// A Value that is not a byte array: passed on as such, in order with the values.
    func deliverWrongType(_ value: Value, number: UInt64) {
        var text = value.description
        if text.count > 64 { text = String(text.prefix(64)) + "..." }
        let signature = value.type.description
        let wake = state.withLock { state in
            state.count(number)
            state.enqueue(.wrongType(signature: signature, value: text), capacity: capacity)
            return state.wake()
        }
        if wake { doorbell.signal() }
    }

    func beginRead() {
        state.withLock { $0.reads += 1 }
    }

    /// A read finished with `value` (nil when it failed): its echo, already here or still to
    /// come, is not a notification. The values held meanwhile go on, in order.
    func endRead(_ value: [UInt8]?) {
        let wake = state.withLock { state -> Bool in
            state.reads -= 1
            if let value {
                if let echo = state.duringReads.firstIndex(of: value) {
                    state.duringReads.remove(at: echo)
                } else {
                    state.echoes.append((value, ContinuousClock.now))
                }
            }
            guard state.reads == 0, !state.duringReads.isEmpty else { return false }
            for bytes in state.duringReads { state.enqueue(.value(bytes), capacity: capacity) }
            state.duringReads = []
            return state.wake()
        }
        if wake { doorbell.signal() }
    }

    /// The link dropped: the stream ends after the values that came before it.
    func linkDropped() {
        let wake = state.withLock { state -> Bool in
            guard state.consumer != nil else { return false }
            state.enqueue(.linkDropped(epoch: state.epoch), capacity: capacity)
            return state.wake()
        }
        if wake { doorbell.signal() }
    }

    /// Ends the session: its stream finishes and its pump stops (after the delivery under way, if
    /// a handler is blocked; nothing waits for that). Idempotent.
    func close() {
        let (consumer, wake) = state.withLock { state in
            state.closed = true
            defer {
                state.consumer = nil
                state.inline = nil
                state.queue = ItemQueue()
                state.duringReads = []
            }
            return (state.consumer, state.wake())
        }
        if wake { doorbell.signal() }
        consumer?.finish()
    }

    private enum PumpStep { case again, wait, exit }

    /// One round of the pump: delivers what waits, then says whether to wait for more.
    private func pump() -> PumpStep {
        drain()
        return state.withLock { state in
            if state.closed { return .exit }
            if state.consumer != nil && !state.queue.isEmpty { return .again }
            state.pumpWaiting = true
            return .wait
        }
    }

    /// Delivers what waits, one item at a time, outside the lock.
    private func drain() {
        while let (item, consumer, inline, dropped) = next() {
            if dropped > 0 { yield(.dropped(count: dropped), to: consumer) }
            switch item {
            case .value(let bytes):
                if let inline { inline(bytes) } else { yield(.value(bytes), to: consumer) }
            case .wrongType(let signature, let value):
                yield(.wrongValueType(signature: signature, value: value), to: consumer)
            case .linkDropped:
                consumer.finish()
            }
        }
    }

    /// The next item for the stream of the moment, with the drops to report before it; nil when
    /// nothing waits or there is no stream.
    private func next() -> (
        Item, AsyncStream<NotificationEvent>.Continuation, (@Sendable ([UInt8]) -> Void)?, Int
    )? {
        state.withLock { state in
            while !state.closed, let consumer = state.consumer, let item = state.queue.popFirst() {
                let inline = state.inline
                if case .linkDropped(let epoch) = item {
                    // A drop meant for a stream the consumer has left already is nothing.
                    guard epoch == state.epoch else { continue }
                    state.consumer = nil
                    state.inline = nil
                }
                let dropped = state.dropped
                state.dropped = 0
                return (item, consumer, inline, dropped)
            }
            return nil
        }
    }

    /// Yields to the stream, which holds `capacity` events at most: what it drops to make room
    /// is counted, to be reported with the next delivery.
    private func yield(_ event: NotificationEvent, to consumer: AsyncStream<NotificationEvent>.Continuation) {
        guard case .dropped(let old) = consumer.yield(event) else { return }
        state.withLock { state in
            switch old {
            case .value, .wrongValueType:
                state.dropped += 1
                state.droppedInAll += 1
            case .dropped(let count): state.dropped += count
            case .fellBackToStartNotify: break
            }
        }
    }
}

/// A FIFO of session items that counts the notifications in it.
struct ItemQueue: Sendable {
    private var items: [NotifySession.Item] = []
    private var head = 0
    private(set) var notifications = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ item: NotifySession.Item) {
        if item.isNotification { notifications += 1 }
        items.append(item)
    }

    mutating func popFirst() -> NotifySession.Item? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if item.isNotification { notifications -= 1 }
        compact()
        return item
    }

    /// Drops the oldest notification (a drop marker before it stays).
    mutating func dropOldestNotification() {
        guard let index = items[head...].firstIndex(where: \.isNotification) else { return }
        if index == head {
            head += 1
        } else {
            items.remove(at: index)
        }
        notifications -= 1
        compact()
    }

    private mutating func compact() {
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
