import DBus
import Dispatch
import Synchronization

/// What a notification stream delivers.
public enum NotificationEvent: Sendable, Equatable {
    /// One notification's value (possibly empty). Never on a stream whose values go to `inline`.
    case value([UInt8])
    /// `.automatic` only, first on the stream: the characteristic offered AcquireNotify but it did
    /// not work (the error says why: bluetoothd refused it, or handed out something that is not a
    /// SEQPACKET socket, which was closed again), so notifications come by StartNotify.
    case fellBackToStartNotify(BlueZError)
    /// StartNotify only: this many notifications were dropped, the oldest first, since the last
    /// report, because the consumer (the `inline` handler or the stream's reader) did not keep
    /// up. It comes before the first value delivered after the gap.
    case dropped(count: Int)
    /// StartNotify only: bluetoothd announced a `Value` that is not a byte array (`ay`): its D-Bus
    /// `signature` (`s`, `ai`) and its `value` as D-Bus text (`"16484d03"`, `[22, 72]`; strings
    /// quoted and escaped; cut after 64 characters, then `...`). A notification, but malformed.
    case wrongValueType(signature: String, value: String)
}

/// How to subscribe to a characteristic's notifications.
public enum NotifyMethod: Sendable {
    /// AcquireNotify where the characteristic offers it (a socket straight from bluetoothd, no
    /// D-Bus message per notification), else StartNotify.
    case automatic
    case startNotify
    case acquireNotify
}

extension BlueZClient {
    /// The characteristic's notifications, in order, until the link drops (the stream finishes)
    /// or the consumer stops iterating (the subscription is released). The PropertiesChanged that
    /// a ReadValue causes is never delivered as a notification.
    ///
    /// With `inline`, each value goes to `inline` instead, at once, on the thread that received it
    /// (the notify socket's reader, or the StartNotify session's own task), and the stream carries
    /// only the other events and tells when it ends. That spares a thread wake-up per
    /// notification, the largest cost of a notification on a small machine. `inline` should be
    /// quick; when it blocks, the socket's buffer fills and the kernel drops datagrams
    /// (AcquireNotify), or the session's queue fills and the oldest values are dropped and
    /// counted (StartNotify, `.dropped`). Either way the rest of the client goes on, and ending
    /// the stream does not wait for the handler.
    public func notifications(
        _ characteristic: Characteristic, using method: NotifyMethod = .automatic,
        inline: (@Sendable ([UInt8]) -> Void)? = nil
    ) async throws(BlueZError) -> AsyncStream<NotificationEvent> {
        let offersAcquire =
            characteristic.flags.contains("notify")
            && mirror.properties(characteristic.path.objectPath, Self.characteristicInterface)?[
                "NotifyAcquired"]
                != nil
        switch method {
        case .startNotify:
            return try await sessionNotifications(characteristic, inline: inline)
        case .acquireNotify:
            return try await acquiredNotifications(characteristic, inline: inline)
        case .automatic:
            guard offersAcquire else { return try await sessionNotifications(characteristic, inline: inline) }
            do {
                return try await acquiredNotifications(characteristic, inline: inline)
            } catch  where error.code == .bluez {
                // NotSupported, NotPermitted, InProgress (another client's StartNotify), a
                // descriptor that is not a SEQPACKET socket: the signal path still works.
                return try await sessionNotifications(characteristic, inline: inline, fellBack: error)
            }
        }
    }

    /// Ends notifications on `characteristic` and waits until bluetoothd has been told: the
    /// acquired socket is shut down, or StopNotify has been answered. Call it before Disconnect.
    public func releaseNotifications(_ characteristic: Characteristic) async {
        if let reader = acquired.removeValue(forKey: characteristic.path) {
            reader.stop()
        }
        await stopNotify(characteristic)
    }

    /// Notifications by AcquireNotify: one SEQPACKET datagram each, read on a thread of its own.
    /// bluetoothd closes the socket when the link drops, which finishes the stream.
    func acquiredNotifications(_ characteristic: Characteristic, inline: (@Sendable ([UInt8]) -> Void)?)
        async throws(BlueZError) -> AsyncStream<NotificationEvent>
    {
        let socket: Int32
        let mtu: UInt16
        let reply = try await call(
            "AcquireNotify", on: characteristic.path.objectPath, interface: BlueZNames.Call.characteristic,
            body: [.propertyMap([:])])
        do throws(DBusError) {
            let (fd, size) = try reply.decode(UnixFD.self, UInt16.self)
            guard let descriptor = fd.take() else {
                throw DBusError(.typeMismatch, "AcquireNotify returned a closed descriptor")
            }
            socket = descriptor
            mtu = size
        } catch {
            throw BlueZError(error, call: "AcquireNotify")
        }
        // A pipe, a file, a stream socket would be read as if it were one notification per
        // datagram, and end at once: closed here (for bluetoothd, that is the release).
        try DatagramReader.requireSeqpacket(socket)
        let (stream, continuation) = AsyncStream.makeStream(of: NotificationEvent.self)
        // bluetoothd closes the socket just before it announces Connected=false: finish once the
        // mirror agrees (2 s at most), so that a reconnect right after does not find it connected.
        let device = characteristic.devicePath.objectPath
        let reader = try DatagramReader(
            socket: socket, mtu: Int(mtu), deliver: inline ?? { continuation.yield(.value($0)) },
            end: { [weak self] byPeer in
                guard byPeer else { return continuation.finish() }
                Task {
                    _ = try? await self?.wait("Connected to go false", timeout: .seconds(2)) {
                        mirror -> WaitOutcome<Bool> in
                        if case .boolean(true)? = mirror.properties(device, Self.deviceInterface)?[
                            "Connected"]
                        {
                            return .pending
                        }
                        return .done(true)
                    }
                    continuation.finish()
                }
            })
        acquired[characteristic.path] = reader
        let path = characteristic.path
        continuation.onTermination = { [weak self] _ in
            reader.stop()
            Task { await self?.forget(reader, at: path) }
        }
        return stream
    }

    func forget(_ reader: DatagramReader, at path: AttributePath) {
        if acquired[path] === reader { acquired[path] = nil }
    }

    /// Notifications by StartNotify and PropertiesChanged on Value, passed on by the mirror in
    /// its one bus order (`routeToSessions`) so that the last values before a drop come before
    /// the drop's Connected=false. The stream finishes at the drop, but the session stays, as in
    /// bluetoothd, which re-enables it after reconnecting: values that arrive before the next
    /// stream is asked for wait for it (the latest `NotifySession.capacity` of them, the rest
    /// counted as dropped), and each value reaches one stream once. With `Cache = no` the session
    /// died with the characteristic object and StartNotify begins a new one. Only a consumer
    /// that stops listening sends StopNotify.
    func sessionNotifications(
        _ characteristic: Characteristic, inline: (@Sendable ([UInt8]) -> Void)?, fellBack: BlueZError? = nil
    ) async throws(BlueZError) -> AsyncStream<NotificationEvent> {
        // A StopNotify still on its way must land before the new StartNotify.
        await stopping[characteristic.path]?.value
        let session: NotifySession
        if let existing = sessions[characteristic.path] {
            session = existing
        } else {
            session = try startSession(characteristic)
        }
        // After closing a descriptor AcquireNotify gave us, bluetoothd may answer "Notify
        // acquired" until it has seen the hang-up: a few tries, 50 ms apart.
        let releasedOurs = fellBack.map { $0.dbusName == nil } ?? false
        var triesLeft = releasedOurs ? 10 : 0
        while true {
            do throws(BlueZError) {
                _ = try await call(
                    "StartNotify", on: characteristic.path.objectPath,
                    interface: BlueZNames.Call.characteristic)
            } catch  where error.reply == .inProgress {
                // This client's session survived the drop (Cache = always): it is ours already.
            } catch  where error.reply == .notPermitted && triesLeft > 0 {
                triesLeft -= 1
                try? await Task.sleep(for: .milliseconds(50))
                continue
            } catch {
                endSession(characteristic.path)
                throw error
            }
            break
        }
        notifying.insert(characteristic.path)
        stopping[characteristic.path] = nil
        let (stream, continuation) = AsyncStream.makeStream(
            of: NotificationEvent.self, bufferingPolicy: .bufferingNewest(NotifySession.capacity))
        if let fellBack { continuation.yield(.fellBackToStartNotify(fellBack)) }
        session.attach(continuation, inline: inline)
        continuation.onTermination = { [weak self] termination in
            guard case .cancelled = termination else { return }
            session.detach()
            Task { await self?.stopNotify(characteristic) }
        }
        return stream
    }

    func startSession(_ characteristic: Characteristic) throws(BlueZError) -> NotifySession {
        let session = try NotifySession(device: characteristic.devicePath.objectPath)
        sessions[characteristic.path] = session
        return session
    }

    func endSession(_ path: AttributePath) {
        sessions.removeValue(forKey: path)?.close()
    }

    /// Passes a change the mirror has applied to the StartNotify sessions it concerns, in bus
    /// order: a characteristic's Value (a byte array, or malformed), a device's Connected=false.
    /// Only appends to their queues: whatever their consumers do, the mirror goes on.
    func routeToSessions(_ change: PropertiesChanged) {
        if let value = change.changed["Value"], change.interface == Self.characteristicInterface,
            let session = sessions[AttributePath(change.path)]
        {
            if case .bytes(let bytes) = value {
                session.deliver(bytes)
            } else {
                session.deliverWrongType(value)
            }
        } else if change.changed["Connected"] == .boolean(false), change.interface == Self.deviceInterface {
            for session in sessions.values where session.device == change.path { session.linkDropped() }
        }
    }

    /// Sends StopNotify for `characteristic` and waits for the reply (so that it goes out before
    /// a Disconnect that follows), or waits for the one already on its way. "No notify session
    /// started" is not an error here.
    func stopNotify(_ characteristic: Characteristic) async {
        endSession(characteristic.path)
        if notifying.remove(characteristic.path) != nil {
            let connection = self.connection
            let timeout = callTimeout
            stopping[characteristic.path] = Task {
                _ = try? await connection.call(
                    destination: Self.service, path: characteristic.path.objectPath,
                    interface: BlueZNames.Call.characteristic, member: "StopNotify", timeout: timeout)
            }
        }
        await stopping[characteristic.path]?.value
    }
}

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
    private let state = Mutex(State())
    private let doorbell = DispatchSemaphore(value: 0)

    /// Starts the pump: a thread of its own, as the notify socket's reader has, so that a handler
    /// that blocks holds neither the client's actor nor one of the few threads of the pool.
    init(device: ObjectPath, capacity: Int = NotifySession.capacity) throws(BlueZError) {
        self.device = device
        self.capacity = capacity
        try DetachedThread.start("StartNotify session's delivery") { [weak self, doorbell] in
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

    func deliver(_ bytes: [UInt8]) {
        let wake = state.withLock { state -> Bool in
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
    func deliverWrongType(_ value: Value) {
        var text = value.description
        if text.count > 64 { text = String(text.prefix(64)) + "..." }
        let signature = value.type.description
        let wake = state.withLock { state in
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
