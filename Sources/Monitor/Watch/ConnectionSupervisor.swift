package import BlueZ
import HeartRate
import Logging

/// Keeps one strap connected and streaming into the session's pipeline: connect, say what the
/// strap is, subscribe, reconnect after drops (with backoff, cut short when Bluetooth comes
/// back), and when the session stops, release the notifications and close the connection it
/// made. One per strap, so several straps are several supervisors.
package struct ConnectionSupervisor: Sendable {
    package enum Outcome: Sendable {
        /// The session was stopped (a limit, Ctrl-C, a closed stdout).
        case stopped
        /// The link dropped and reconnecting was not wanted.
        case dropped
    }

    package let client: BlueZClient
    package let finder: DeviceFinder
    package let target: DiscoveredDevice
    package let pipeline: EventPipeline
    package let reconnect: Bool
    /// Taken for each Connect (and each search for a strap bluetoothd forgot): one at a time per
    /// adapter.
    package var gate: ConnectGate
    /// How long one Connect may take (services resolved included). Shorter when straps share
    /// the adapter: a strap that is away must not hold the others' turn for long.
    package var connectTimeout: Duration
    /// How to subscribe: AcquireNotify where offered (hrm alone reads the strap), or StartNotify
    /// (`--share`: other programs on this machine can subscribe too).
    package var notifyMethod: NotifyMethod
    /// `--ecg`/`--acc`: the PMD streams to run beside heart rate on each connection.
    package var sensorStreams: SensorStreams

    /// The strap's address, made once: every event of this strap carries this one `String`, so
    /// that a processor finding the strap's entry compares storage, not characters, once per
    /// notification.
    package let address: String

    package init(
        client: BlueZClient, finder: DeviceFinder, target: DiscoveredDevice, pipeline: EventPipeline,
        reconnect: Bool, gate: ConnectGate = ConnectGate(), connectTimeout: Duration = .seconds(20),
        notifyMethod: NotifyMethod = .automatic, sensorStreams: SensorStreams = SensorStreams()
    ) {
        self.client = client
        self.finder = finder
        self.target = target
        self.pipeline = pipeline
        self.reconnect = reconnect
        self.gate = gate
        self.connectTimeout = connectTimeout
        self.notifyMethod = notifyMethod
        self.sensorStreams = sensorStreams
        address = target.address.description
    }

    package func status(_ state: MonitorEvent.State, _ detail: String? = nil) {
        pipeline.send(MonitorEvent(device: address, kind: .status(state, detail: detail)))
    }

    /// bluetoothd's "Notify acquired" (NotPermitted), said plainly: another program on this
    /// machine holds the strap's notifications by AcquireNotify, and nobody else can subscribe
    /// until it lets go.
    static func plainly(_ error: BlueZError) -> BlueZError {
        guard error.message.contains("Notify acquired") else { return error }
        return BlueZError(
            error.code,
            "another program on this machine holds the strap's notifications by AcquireNotify, which lets nobody else subscribe (bluetoothd: \(error.message)); hrm can once it lets go (hrm itself leaves them to others with --share)"
        )
    }

    /// Bluetooth itself unavailable: the same for every strap on it.
    package static let bluetoothUnavailable: Set<BlueZError.Code> = [
        .adapterPoweredOff, .adapterBlocked, .bluetoothdNotRunning, .noAdapter,
    ]

    /// What the supervisor holds on the strap, to give back however the run ends.
    package struct Holdings: Sendable {
        /// This run made the connection (so it is ours to close).
        package var connection = false
        /// Notifications to release (StopNotify, or the acquired socket shut).
        package var notifications: Characteristic? = nil
    }

    /// Runs until the session is stopped (the task is cancelled) or, without `reconnect`, the
    /// link drops. Throws what ends the run: Bluetooth unavailable before the first connection,
    /// access denied, a strap without a heart-rate measurement, notifications refused. However it
    /// ends, what it holds is given back: notifications released, then the connection it made
    /// closed, so that no strap is left connected after hrm has gone.
    package func run() async throws(BlueZError) -> Outcome {
        let levels = await client.batteryLevels(target.path)
        let batteryWatch = Task { [pipeline, address] in
            for await percent in levels {
                pipeline.send(MonitorEvent(device: address, kind: .battery(percent: percent)))
            }
        }
        defer { batteryWatch.cancel() }
        var holdings = Holdings()
        let result: Result<Outcome, BlueZError>
        do throws(BlueZError) {
            result = .success(try await supervise(&holdings))
        } catch {
            result = .failure(error)
        }
        // Outside the (perhaps cancelled) task: a cancelled task's calls are not sent. Disconnect
        // is sent, not awaited: its reply comes only once the link is down, seconds later, and
        // bluetoothd takes the link down whether or not hrm is still there to hear it.
        await Task { [client, target, holdings] in
            if let subscribed = holdings.notifications { await client.releaseNotifications(subscribed) }
            if holdings.connection { try? await client.requestDisconnect(target.path) }
        }.value
        return try result.get()
    }

    private func supervise(_ holdings: inout Holdings) async throws(BlueZError) -> Outcome {
        var backoff = Backoff()
        var firstConnection = true
        var pmdUnavailableSaid = false
        while !Task.isCancelled {
            status(firstConnection ? .connecting : .reconnecting)
            finder.log.info("\(firstConnection ? "connecting to" : "reconnecting to") \(address)")
            do {
                let turn = try await gate.withTurn { () async throws(BlueZError) -> Bool in
                    // bluetoothd forgets a device it has not seen for 30 s (its temporary
                    // timeout), first connection or not: scan for it again then.
                    try await finder.rediscover(target)
                    return try await client.connect(
                        target.path, require: [BluetoothUUID(0x2A37)], timeout: connectTimeout, settle: false)
                }
                // Stopped while waiting for the turn.
                guard let made = turn else { break }
                holdings.connection = holdings.connection || made
            } catch {
                if Task.isCancelled { break }
                // Once watching, an adapter switched off or a bluetoothd restarting is a pause like
                // a drop: keep trying. Before that, it is an answer the user needs now.
                // (A lost bus is not decided here: the session's busLost watch stops everything.)
                if !reconnect || error.code == .accessDenied
                    || (firstConnection && Self.bluetoothUnavailable.contains(error.code))
                {
                    throw error
                }
                let delay = backoff.delay()
                finder.log.info(
                    "connecting to \(address) failed: \(error.message)",
                    metadata: ["code": "\(error.code.rawValue)", "retry_in": "\(delay)"])
                status(
                    .disconnected, "\(error.message)\(Self.roomHint(error, gate.links)); retrying in \(delay)"
                )
                await client.pause(delay)
                continue
            }
            backoff.reset()
            finder.log.info("connected to \(address)")
            status(.connected)
            guard let measurement = await client.characteristic(BluetoothUUID(0x2A37), of: target.path) else {
                throw BlueZError(.bluez, "the device has no Heart Rate Measurement characteristic")
            }
            let notifications: AsyncStream<NotificationEvent>
            do {
                notifications = try await client.notifications(
                    measurement, using: notifyMethod, inline: decoder())
            } catch {
                // Stopped while subscribing: nothing to release but the link.
                if Task.isCancelled { break }
                throw Self.plainly(error)
            }
            // Subscribed first, described after: the settle and the reads (about 80 ms) are not
            // spent before the first beat. A strap notifies about once a second, so `info` still
            // almost always comes before the first measurement.
            if firstConnection {
                await client.settleServices(of: target.path)
                let acquired = await client.holdsAcquiredNotifications(measurement)
                await reportInfo(notify: acquired ? .acquireNotify : .startNotify)
                firstConnection = false
            }
            // Until the link drops or the session stops; ending this iteration early (the task
            // is cancelled) releases the notifications. Values go to `decoder()` on the reader's
            // thread; what comes here is what the client has to say about them.
            gate.linkUp()
            let sensors = startSensorStreams(saying: !pmdUnavailableSaid)
            for await event in notifications { report(event) }
            gate.linkDown()
            if let sensors {
                // Stopped: the streams are stopped before the link is let go. Dropped: they end
                // with the link.
                sensors.cancel()
                if await sensors.value == .unavailable { pmdUnavailableSaid = true }
            }
            finder.log.info(
                Task.isCancelled
                    ? "session stopped: releasing \(address)'s notifications"
                    : "the link to \(address) dropped\(reconnect ? ": reconnecting at once" : " (--no-reconnect)")"
            )
            if Task.isCancelled {
                holdings.notifications = measurement
                break
            }
            // bluetoothd says no more than Connected=false (5.66 has no reason on the bus).
            status(.disconnected, "the link dropped")
            if !reconnect {
                // The link is gone already: nothing to disconnect.
                holdings.connection = false
                return .dropped
            }
            // At once: a pending Connect is how BlueZ waits for a strap to come back (it completes
            // as the strap advertises again); only a Connect that fails backs off.
        }
        return .stopped
    }

    /// The ECG and acceleration streams of this connection, on a task of their own beside the
    /// heart rate (nil when none were asked for).
    private func startSensorStreams(saying: Bool) -> Task<PMDSession.Outcome, Never>? {
        guard !sensorStreams.isEmpty else { return nil }
        let session = PMDSession(
            client: client, target: target, pipeline: pipeline, streams: sensorStreams, log: finder.log,
            dataMethod: notifyMethod)
        return Task { await session.run(sayUnavailable: saying) }
    }

    /// A full controller answers a Connect with the same routine abort as a strap out of reach:
    /// when other straps hold links on the adapter, say that it may be full.
    package static func roomHint(_ error: BlueZError, _ links: Int) -> String {
        guard links > 0, error.isRoutineConnectFailure else { return "" }
        return
            " (the adapter holds \(links) other strap\(links == 1 ? "" : "s")' link\(links == 1 ? "" : "s") and may have no room for another: ADAPTER/DEVICE puts a strap on another adapter)"
    }

    /// What the strap says about itself, once, after the first connection; and what it has but
    /// did not give in time, so that a missing model or battery is explained.
    private func reportInfo(notify: MonitorEvent.NotifyMode) async {
        let info = await client.info(target.path)
        pipeline.send(
            MonitorEvent(
                device: address,
                kind: .info(
                    name: info.name ?? target.displayName,
                    location: info.bodySensorLocation.map(BodySensorLocation.init(rawValue:)),
                    battery: info.battery, manufacturer: info.manufacturer, model: info.model, notify: notify)
            ))
        if !info.unread.isEmpty {
            let message = "the strap did not give " + info.unread.joined(separator: "; ")
            pipeline.send(
                MonitorEvent(
                    device: address, kind: .error(code: .infoUnavailable, message: message, hex: nil)))
        }
    }

    /// What the BlueZ client says about the notifications, as events.
    private func report(_ event: NotificationEvent) {
        let (code, message): (EventErrorCode, String)
        switch event {
        case .value(let bytes):
            return pipeline.send(MonitorEvent.decoding(bytes, device: address))
        case .fellBackToStartNotify(let error):
            (code, message) = (
                .acquireNotifyFailed, "\(error.message); notifications come by StartNotify instead"
            )
        case .dropped(let count):
            (code, message) = (
                .notificationsDropped,
                "\(count) notification\(count == 1 ? "" : "s") dropped: the output did not keep up"
            )
        case .wrongValueType(let signature, let value):
            (code, message) = (
                .malformedValue,
                "bluetoothd announced a notification of D-Bus type \(signature), not bytes: \(value)"
            )
        }
        pipeline.send(MonitorEvent(device: address, kind: .error(code: code, message: message, hex: nil)))
    }

    /// Decodes each notification on the thread that receives it and sends it on: one thread
    /// wake-up per notification, not three.
    private func decoder() -> @Sendable ([UInt8]) -> Void {
        { [pipeline, address] bytes in
            pipeline.send(MonitorEvent.decoding(bytes, device: address))
        }
    }
}

extension MonitorEvent {
    /// A notification of 0x2A37 as a `measurement`, or an `error` carrying its payload.
    package static func decoding(_ bytes: [UInt8], device: String) -> MonitorEvent {
        do {
            return MonitorEvent(
                device: device, kind: .measurement(try HeartRateMeasurement(decoding: bytes)), payload: bytes)
        } catch {
            return MonitorEvent(
                device: device,
                kind: .error(
                    code: EventErrorCode(error.code), message: error.description,
                    hex: HexPayload.format(bytes)))
        }
    }
}
