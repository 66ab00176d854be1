import DBus
import HeartRate
import Threads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The notification pump: one task per connected strap sends its frames by socket or signal.
extension Simulator {
    func startNotifying(_ path: ObjectPath) {
        guard let device = devices[path] else { return }
        device.notifyTask?.cancel()
        if device.spec.heartRate.mode == .replay { return startReplaying(path) }
        let interval = device.spec.heartRate.interval
        devices[path]?.notifyTask = Task { [weak self] in
            let clock = ContinuousClock()
            var next = clock.now + .seconds(interval)
            while !Task.isCancelled {
                try? await clock.sleep(until: next)
                if Task.isCancelled { return }
                await self?.notify(path)
                next += .seconds(interval)
            }
        }
    }

    func stopNotifying(_ path: ObjectPath) {
        devices[path]?.notifyTask?.cancel()
        devices[path]?.notifyTask = nil
    }

    func notify(_ path: ObjectPath) {
        guard var device = devices[path], device.connected, device.servicesResolved,
            device.layout.characteristics.contains(where: { $0.role == .measurement })
        else { return }
        let t = now
        let changes = device.spec.heartRate.contactChanges
        while device.contactChangesDone < changes.count && changes[device.contactChangesDone].at <= t {
            if let contact = Scenario.HeartRateStream.contact(changes[device.contactChangesDone].contact) {
                device.generator.contact = contact
            }
            device.contactChangesDone += 1
        }
        let frame = device.generator.next(at: t)
        devices[path] = device
        if deliver(frame, to: path) { notificationSent(path) }
    }

    /// Whether a client would get a notification of the strap's 0x2A37 now: an acquired socket
    /// or a StartNotify session.
    func hasSubscriber(_ path: ObjectPath) -> Bool {
        guard let device = devices[path],
            let measurement = device.layout.characteristics.first(where: { $0.role == .measurement })
        else { return false }
        return device.acquired[measurement.path] != nil
            || !(device.notifySessions[measurement.path] ?? []).isEmpty
    }

    /// Sends one frame of the strap's 0x2A37 to its clients, by socket and by signal. Returns
    /// whether any client got it (the caller counts it with `notificationSent`).
    func deliver(_ frame: [UInt8], to path: ObjectPath) -> Bool {
        guard let device = devices[path],
            let measurement = device.layout.characteristics.first(where: { $0.role == .measurement })
        else { return false }
        let hex = frame.map { String($0, radix: 16).leftPadded(2) }.joined()
        var delivered = false
        if let fd = device.acquired[measurement.path] {
            let sentAt = monotonicNanos()
            let sent = Self.sendFrame(frame, to: fd)
            if sent < 0 && (errno == EPIPE || errno == ECONNRESET) {
                // The client closed its end: the acquisition is over.
                close(fd)
                devices[path]?.acquired[measurement.path] = nil
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: measurement.path)
                log.record("acquire-released", ["path": measurement.path.rawValue])
            } else {
                delivered = sent >= 0
                log.record(
                    "notify",
                    [
                        "path": measurement.path.rawValue, "via": "fd", "hex": hex, "sent": sent >= 0,
                        "mono_ns": sentAt,
                    ])
            }
        }
        if !(device.notifySessions[measurement.path] ?? []).isEmpty {
            let sentAt = monotonicNanos()
            let type = Scenario.NotificationValueType(rawValue: device.spec.valueType) ?? .bytes
            if type == .bytes {
                try? connection?.setProperty(
                    "Value", to: .bytes(frame), interface: BlueZName.gattCharacteristic,
                    at: measurement.path)
            } else {
                // The wrong type on purpose: past the exported property's type check, straight
                // onto the bus (the stored Value stays as it was).
                let value: Value =
                    switch type {
                    case .bytes: .bytes(frame)
                    case .string: .string(hex)
                    case .int32s: .array(.int32, frame.map { .int32(Int32($0)) })
                    }
                try? connection?.emitSignal(
                    path: measurement.path, interface: .properties, member: "PropertiesChanged",
                    body: [
                        .string(BlueZName.gattCharacteristic.rawValue), .propertyMap(["Value": value]),
                        .strings([]),
                    ])
            }
            var entry: [String: Any] = [
                "path": measurement.path.rawValue, "via": "signal", "hex": hex, "mono_ns": sentAt,
            ]
            if type != .bytes { entry["type"] = type.rawValue }
            log.record("notify", entry)
            delivered = true
        }
        return delivered
    }

    /// Writes one frame into our end of an acquired descriptor: a socket's (no SIGPIPE), or a
    /// pipe's (`acquireFd: pipe`). Returns what send or write returned, errno set.
    static func sendFrame(_ frame: [UInt8], to fd: Int32) -> Int {
        let sent = frame.withUnsafeBytes { send(fd, $0.baseAddress, frame.count, Int32(MSG_NOSIGNAL)) }
        guard sent < 0 && errno == ENOTSOCK else { return sent }
        return frame.withUnsafeBytes { write(fd, $0.baseAddress, frame.count) }
    }

    /// Counts a notification sent and starts what the scenario ties to that count: the strap's
    /// drops, and events.
    func notificationSent(_ path: ObjectPath) {
        guard let device = devices[path] else { return }
        let count = device.notificationsSent + 1
        devices[path]?.notificationsSent = count
        notificationsInAll += 1
        for drop in device.spec.drops where drop.afterNotifications == count {
            // A drop with a delay starts on the timeline's tick (or before the next frame).
            let delay = drop.delay ?? 0
            var started = Scenario.Drop(at: now + delay, for: drop.for)
            started.every = drop.every
            devices[path]?.extraDrops.append(started)
            if delay <= 0 { linkLost(path, reason: "link") }
        }
        runEvents(until: now)
    }

    /// Closes our ends of the acquired sockets: the client reads end of file.
    func closeAcquired(_ path: ObjectPath, announce: Bool) {
        guard let acquired = devices[path]?.acquired else { return }
        for (charPath, fd) in acquired {
            close(fd)
            if announce {
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: charPath)
            }
        }
        devices[path]?.acquired = [:]
    }

    /// Notices clients that closed their acquired sockets. bluetoothd watches the socket and
    /// sees the hang-up at once; the simulator looks on every tick and before handling any call.
    func reapReleasedSockets() {
        for path in devices.keys { reapReleasedSockets(path) }
    }

    func reapReleasedSockets(_ path: ObjectPath) {
        guard let acquired = devices[path]?.acquired else { return }
        for (charPath, fd) in acquired {
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLHUP | POLLERR) != 0 {
                close(fd)
                devices[path]?.acquired[charPath] = nil
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: charPath)
                log.record("acquire-released", ["path": charPath.rawValue])
            }
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
