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
    /// StartNotify: each value arrives as a PropertiesChanged signal of `Value` on the bus.
    case startNotify
    /// AcquireNotify only: a socket from bluetoothd carrying one datagram per notification; fails
    /// where the characteristic does not offer it (no fallback).
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
        logger.debug(
            "notifications of \(characteristic.uuid) at \(characteristic.path.objectPath)",
            metadata: [
                "method": "\(method)", "flags": "\(characteristic.flags.joined(separator: ","))",
                "offersAcquireNotify": "\(offersAcquire)",
            ])
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
                logger.info("AcquireNotify failed (\(error.message)): falling back to StartNotify")
                return try await sessionNotifications(characteristic, inline: inline, fellBack: error)
            }
        }
    }

    /// Whether `characteristic`'s notifications come by AcquireNotify (a socket of this client's
    /// own, which no other program can share), rather than by StartNotify.
    public func holdsAcquiredNotifications(_ characteristic: Characteristic) -> Bool {
        acquired[characteristic.path] != nil
    }

    /// Ends notifications on `characteristic` and waits until bluetoothd has been told: the
    /// acquired socket is shut down, or StopNotify has been answered. Call it before Disconnect.
    public func releaseNotifications(_ characteristic: Characteristic) async {
        acquired.removeValue(forKey: characteristic.path)?.reader.stop()
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
        logger.debug(
            "notifications of \(characteristic.path.objectPath) by AcquireNotify",
            metadata: ["mtu": "\(mtu)", "fd": "\(socket)"])
        let logger = self.logger
        // Bounded, as StartNotify's: a reader of the stream (no `inline`) that falls behind loses
        // the newest values beyond `NotifySession.capacity`, counted and said in a `.dropped`
        // event before the next value it gets, never a backlog that grows by every notification.
        let (stream, continuation) = AsyncStream.makeStream(
            of: NotificationEvent.self, bufferingPolicy: .bufferingOldest(NotifySession.capacity))
        let drops = StreamDrops()
        // bluetoothd closes the socket just before it announces Connected=false: finish once the
        // mirror agrees (2 s at most), so that a reconnect right after does not find it connected.
        let device = characteristic.devicePath.objectPath
        let tasks = self.tasks
        let reader = try DatagramReader(
            socket: socket, mtu: Int(mtu),
            deliver: tracing(
                inline ?? { drops.deliver($0, to: continuation) }, characteristic.path, by: "AcquireNotify"),
            end: { [weak self] byPeer in
                logger.debug(
                    "notify socket of \(characteristic.path.objectPath) closed by \(byPeer ? "bluetoothd" : "hrm")"
                )
                guard byPeer else { return continuation.finish() }
                tasks.run {
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
        acquired[characteristic.path] = (reader, drops)
        let path = characteristic.path
        continuation.onTermination = { [weak self] _ in
            reader.stop()
            tasks.run { await self?.forget(reader, at: path) }
        }
        return stream
    }

    func forget(_ reader: DatagramReader, at path: AttributePath) {
        if acquired[path]?.reader === reader { acquired[path] = nil }
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
        logger.debug("notifications of \(characteristic.path.objectPath) by StartNotify")
        notifying.insert(characteristic.path)
        stopping[characteristic.path] = nil
        let (stream, continuation) = AsyncStream.makeStream(
            of: NotificationEvent.self, bufferingPolicy: .bufferingNewest(NotifySession.capacity))
        if let fellBack { continuation.yield(.fellBackToStartNotify(fellBack)) }
        session.attach(continuation, inline: inline)
        let tasks = self.tasks
        continuation.onTermination = { [weak self] termination in
            guard case .cancelled = termination else { return }
            session.detach()
            tasks.run { await self?.stopNotify(characteristic) }
        }
        return stream
    }

    func startSession(_ characteristic: Characteristic) throws(BlueZError) -> NotifySession {
        // Value signals numbered so far came before the session: a gap is counted after them.
        let session = try NotifySession(
            device: characteristic.devicePath.objectPath,
            numberedFrom: valueNumbers.current(characteristic.path.objectPath))
        sessions[characteristic.path] = session
        return session
    }

    func endSession(_ path: AttributePath) {
        sessions.removeValue(forKey: path)?.close()
    }

    /// Passes a change the mirror has applied to the StartNotify sessions it concerns, in bus
    /// order: a characteristic's Value signal (a byte array, or malformed; `valueNumber` is its
    /// number, from which the session counts those the mirror's stream dropped), a device's
    /// Connected=false. A Value without a number (found by loading the objects again) is no
    /// notification. Only appends to their queues: whatever their consumers do, the mirror goes on.
    func routeToSessions(_ change: PropertiesChanged, valueNumber: UInt64?) {
        if let valueNumber, let value = change.changed["Value"],
            change.interface == Self.characteristicInterface,
            let session = sessions[AttributePath(change.path)]
        {
            if case .bytes(let bytes) = value {
                session.deliver(bytes, number: valueNumber)
            } else {
                session.deliverWrongType(value, number: valueNumber)
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
            stopping[characteristic.path] = tasks.run {
                _ = try? await connection.call(
                    destination: Self.service, path: characteristic.path.objectPath,
                    interface: BlueZNames.Call.characteristic, member: "StopNotify", timeout: timeout)
            }
        }
        await stopping[characteristic.path]?.value
    }
}

/// The values of an AcquireNotify stream its reader did not take in time: counted on the socket's
/// reader thread, and said (`.dropped(n)`) before the next value the stream has room for.
final class StreamDrops: Sendable {
    private let counts = Mutex((waiting: 0, inAll: 0))

    /// Values dropped since the stream began.
    var inAll: Int { counts.withLock { $0.inAll } }

    /// Yields `bytes` as a value, after the count of those dropped before it, if any.
    func deliver(_ bytes: [UInt8], to continuation: AsyncStream<NotificationEvent>.Continuation) {
        counts.withLock { counts in
            if counts.waiting > 0, case .enqueued = continuation.yield(.dropped(count: counts.waiting)) {
                counts.waiting = 0
            }
            if case .dropped = continuation.yield(.value(bytes)) {
                counts.waiting += 1
                counts.inAll += 1
            }
        }
    }
}
