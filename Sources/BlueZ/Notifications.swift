import DBus
import Synchronization

/// What a notification stream delivers.
public enum NotificationEvent: Sendable, Equatable {
    /// One notification's value (possibly empty). Never on a stream whose values go to `inline`.
    case value([UInt8])
    /// `.automatic` only, first on the stream: the characteristic offered AcquireNotify but it did
    /// not work (the error says why: bluetoothd refused it, or handed out something that is not a
    /// SEQPACKET socket, which was closed again), so notifications come by StartNotify.
    case fellBackToStartNotify(BlueZError)
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
    /// (the notify socket's reader, or the task following bluetoothd's signals), and the stream
    /// only tells when it ends. That spares a thread wake-up per notification, the largest cost of
    /// a notification on a small machine; `inline` must be quick and must not block.
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
        do throws(DBusError) {
            let reply = try await connection.call(
                destination: Self.service, path: characteristic.path.objectPath,
                interface: BlueZNames.Call.characteristic, member: "AcquireNotify",
                body: [.propertyMap([:])],
                timeout: callTimeout)
            let (fd, size) = try reply.decode(UnixFD.self, UInt16.self)
            guard let descriptor = fd.take() else {
                throw DBusError(.typeMismatch, "AcquireNotify returned a closed descriptor")
            }
            socket = descriptor
            mtu = size
        } catch {
            throw BlueZError(error)
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

    /// Notifications by StartNotify and PropertiesChanged on Value, taken from the mirror's one
    /// ordered event stream so that the last values before a drop come before the drop's
    /// Connected=false. The stream finishes at the drop, but the session stays, as in bluetoothd,
    /// which re-enables it after reconnecting: values that arrive before the next stream is asked
    /// for wait for it, and each value reaches one stream once. With `Cache = no` the session
    /// died with the characteristic object and StartNotify begins a new one. Only a consumer
    /// that stops listening sends StopNotify.
    func sessionNotifications(
        _ characteristic: Characteristic, inline: (@Sendable ([UInt8]) -> Void)?, fellBack: BlueZError? = nil
    ) async throws(BlueZError) -> AsyncStream<NotificationEvent> {
        // A StopNotify still on its way must land before the new StartNotify.
        await stopping[characteristic.path]?.value
        let session = sessions[characteristic.path] ?? startSession(characteristic)
        do throws(DBusError) {
            _ = try await connection.call(
                destination: Self.service, path: characteristic.path.objectPath,
                interface: BlueZNames.Call.characteristic, member: "StartNotify", timeout: callTimeout)
        } catch  where BlueZReply(errorName: error.name.rawValue) == .inProgress {
            // This client's session survived the drop (Cache = always): it is ours already.
        } catch {
            endSession(characteristic.path)
            throw BlueZError(error)
        }
        notifying.insert(characteristic.path)
        stopping[characteristic.path] = nil
        let (stream, continuation) = AsyncStream.makeStream(of: NotificationEvent.self)
        if let fellBack { continuation.yield(.fellBackToStartNotify(fellBack)) }
        session.attach(continuation, inline: inline)
        continuation.onTermination = { [weak self] termination in
            guard case .cancelled = termination else { return }
            session.detach()
            Task { await self?.stopNotify(characteristic) }
        }
        return stream
    }

    func startSession(_ characteristic: Characteristic) -> NotifySession {
        let path = characteristic.path.objectPath
        let device = characteristic.devicePath.objectPath
        let (events, watcher) = watch()
        let session = NotifySession(watcher: watcher)
        let pump = Task {
            for await event in events {
                guard case .propertiesChanged(let change) = event else { continue }
                if change.path == path, case .bytes(let bytes)? = change.changed["Value"] {
                    session.deliver(bytes)
                } else if change.path == device, change.changed["Connected"] == .boolean(false) {
                    session.linkDropped()
                }
            }
        }
        session.pump = pump
        sessions[characteristic.path] = session
        return session
    }

    func endSession(_ path: AttributePath) {
        guard let session = sessions.removeValue(forKey: path) else { return }
        session.close()
        unwatch(session.watcher)
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

/// A StartNotify session's values: passed to the stream of the moment, held while there is none
/// (between a drop and the next stream), so that nothing bluetoothd sends after re-enabling the
/// session on reconnect is lost.
final class NotifySession: Sendable {
    private struct State {
        var consumer: AsyncStream<NotificationEvent>.Continuation? = nil
        var inline: (@Sendable ([UInt8]) -> Void)? = nil
        var held: [[UInt8]] = []
        var pump: Task<Void, Never>? = nil
        /// ReadValue calls on their way, and the values that arrived meanwhile (one of them may
        /// be a read's echo).
        var reads = 0
        var duringReads: [[UInt8]] = []
        /// Values read whose echo has not come through the pump yet, with when they were read:
        /// the echo is dropped when it comes (within a second; after that it was not sent).
        var echoes: [(value: [UInt8], at: ContinuousClock.Instant)] = []
    }

    let watcher: Int
    private let state = Mutex(State())

    init(watcher: Int) { self.watcher = watcher }

    var pump: Task<Void, Never>? {
        get { state.withLock { $0.pump } }
        set { state.withLock { $0.pump = newValue } }
    }

    func attach(
        _ consumer: AsyncStream<NotificationEvent>.Continuation, inline: (@Sendable ([UInt8]) -> Void)?
    ) {
        state.withLock { state in
            state.consumer = consumer
            state.inline = inline
            for bytes in state.held { Self.pass(bytes, &state) }
            state.held = []
        }
    }

    /// The consumer stopped listening (a stream finished by a drop never calls this).
    func detach() {
        state.withLock { $0.consumer = nil }
    }

    func deliver(_ bytes: [UInt8]) {
        state.withLock { state in
            let now = ContinuousClock.now
            state.echoes.removeAll { now - $0.at > .seconds(1) }
            if let echo = state.echoes.firstIndex(where: { $0.value == bytes }) {
                state.echoes.remove(at: echo)
            } else if state.reads > 0 {
                state.duringReads.append(bytes)
            } else {
                Self.pass(bytes, &state)
            }
        }
    }

    private static func pass(_ bytes: [UInt8], _ state: inout State) {
        guard let consumer = state.consumer else { return state.held.append(bytes) }
        if let inline = state.inline { inline(bytes) } else { consumer.yield(.value(bytes)) }
    }

    func beginRead() {
        state.withLock { $0.reads += 1 }
    }

    /// A read finished with `value` (nil when it failed): its echo, already here or still to
    /// come, is not a notification. The values held meanwhile go on, in order.
    func endRead(_ value: [UInt8]?) {
        state.withLock { state in
            state.reads -= 1
            if let value {
                if let echo = state.duringReads.firstIndex(of: value) {
                    state.duringReads.remove(at: echo)
                } else {
                    state.echoes.append((value, ContinuousClock.now))
                }
            }
            guard state.reads == 0 else { return }
            for bytes in state.duringReads { Self.pass(bytes, &state) }
            state.duringReads = []
        }
    }

    func linkDropped() {
        state.withLock { state in
            state.consumer?.finish()
            state.consumer = nil
        }
    }

    func close() {
        state.withLock { state in
            state.pump?.cancel()
            state.consumer?.finish()
            state.consumer = nil
            state.held = []
        }
    }
}
