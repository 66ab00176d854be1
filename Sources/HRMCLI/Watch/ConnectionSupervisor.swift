import BlueZ
import HeartRate

/// Keeps one strap connected and streaming into the session's pipeline: connect, say what the
/// strap is, subscribe, reconnect after drops (with backoff, cut short when Bluetooth comes
/// back), and when the session stops, release the notifications and close the connection it
/// made. One per strap, so several straps are several supervisors.
struct ConnectionSupervisor: Sendable {
    enum Outcome: Sendable {
        /// The session was stopped (a limit, Ctrl-C, a closed stdout).
        case stopped
        /// The link dropped and reconnecting was not wanted.
        case dropped
    }

    let client: BlueZClient
    let finder: DeviceFinder
    let target: DiscoveredDevice
    let pipeline: EventPipeline
    let reconnect: Bool

    var address: String { target.address.description }

    func status(_ state: MonitorEvent.State, _ detail: String? = nil) {
        pipeline.send(MonitorEvent(device: address, kind: .status(state, detail: detail)))
    }

    /// Runs until the session is stopped (the task is cancelled) or, without `reconnect`, the
    /// link drops. Throws what ends the run: Bluetooth unavailable before the first connection,
    /// access denied, a strap without a heart-rate measurement.
    func run() async throws(BlueZError) -> Outcome {
        let levels = await client.batteryLevels(target.path)
        let batteryWatch = Task { [pipeline, address] in
            for await percent in levels {
                pipeline.send(MonitorEvent(device: address, kind: .battery(percent: percent)))
            }
        }
        defer { batteryWatch.cancel() }

        var backoff = Backoff()
        var weConnected = false
        var firstConnection = true
        var subscribed: Characteristic? = nil
        var outcome = Outcome.stopped
        while !Task.isCancelled {
            status(firstConnection ? .connecting : .reconnecting)
            do {
                if !firstConnection { try await finder.rediscover(target) }
                weConnected =
                    try await client.connect(target.path, require: [BluetoothUUID(0x2A37)]) || weConnected
            } catch {
                if Task.isCancelled { break }
                // Once watching, an adapter switched off or a bluetoothd restarting is a pause like
                // a drop: keep trying. Before that, it is an answer the user needs now.
                let unavailable: Set<BlueZError.Code> = [
                    .adapterPoweredOff, .bluetoothdNotRunning, .noAdapter,
                ]
                if !reconnect || error.code == .accessDenied
                    || (firstConnection && unavailable.contains(error.code))
                {
                    throw error
                }
                let delay = backoff.delay()
                status(.disconnected, "\(error.message); retrying in \(delay)")
                await client.pause(delay)
                continue
            }
            backoff.reset()
            status(.connected)
            if firstConnection {
                await reportInfo()
                firstConnection = false
            }
            guard let measurement = await client.characteristic(BluetoothUUID(0x2A37), of: target.path) else {
                throw BlueZError(.bluez, "the device has no Heart Rate Measurement characteristic")
            }
            let notifications: AsyncStream<NotificationEvent>
            do {
                notifications = try await client.notifications(measurement, inline: decoder())
            } catch {
                // Stopped while subscribing: nothing to release but the link.
                if Task.isCancelled { break }
                throw error
            }
            // Until the link drops or the session stops; ending this iteration early (the task
            // is cancelled) releases the notifications.
            for await _ in notifications {}
            if Task.isCancelled {
                subscribed = measurement
                break
            }
            status(.disconnected)
            if !reconnect {
                // The link is gone already: nothing to disconnect.
                (outcome, weConnected) = (.dropped, false)
                break
            }
            try? await Task.sleep(for: backoff.delay())
        }
        // Clean up outside the cancelled task (cancelled calls are not sent): notifications
        // released first, then the connection hrm made.
        await Task { [client, target, weConnected, subscribed] in
            if let subscribed { await client.releaseNotifications(subscribed) }
            if weConnected { try? await client.disconnect(target.path) }
        }.value
        return outcome
    }

    /// What the strap says about itself, once, after the first connection.
    private func reportInfo() async {
        let info = await client.info(target.path)
        pipeline.send(
            MonitorEvent(
                device: address,
                kind: .info(
                    name: info.name ?? target.displayName,
                    location: info.bodySensorLocation.map(BodySensorLocation.init(rawValue:)),
                    battery: info.battery, manufacturer: info.manufacturer, model: info.model)))
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
    static func decoding(_ bytes: [UInt8], device: String) -> MonitorEvent {
        do {
            return MonitorEvent(device: device, kind: .measurement(try HeartRateMeasurement(decoding: bytes)))
        } catch {
            return MonitorEvent(
                device: device,
                kind: .error(
                    code: error.code.rawValue, message: error.description, hex: HexPayload.format(bytes)))
        }
    }
}
