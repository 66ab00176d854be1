import DBus

/// The scenario's timeline: each tick's appearances, drops and RSSI reports, and the events.
extension Simulator {
    /// One step of the scenario's timeline.
    func advance() {
        guard !down else { return }
        let t = now
        runEvents(until: t)
        for (path, device) in devices {
            guard let adapter = adapters[device.adapter] else { continue }
            // Drops, vanishing.
            if device.connected && !reachable(device, at: t) {
                linkLost(path, reason: "link")
                continue
            }
            // Discovery: appear, report RSSI.
            let started = adapter.discovering
            if started && !device.connected && reachable(device, at: t) && passesFilters(device, adapter) {
                if !device.exported {
                    try? exportDevice(path, rssi: true)
                    devices[path]?.nextReport = t + 1
                } else if t >= device.nextReport {
                    devices[path]?.lastSeen = t
                    devices[path]?.nextReport = t + 1
                    let filtered = adapter.discoveryClients.values.contains {
                        $0.started && !$0.filter.isEmpty
                    }
                    if filtered, let rssi = device.spec.rssi {
                        try? connection?.setProperty(
                            "RSSI", to: .int16(Int16(clamping: rssi)), interface: BlueZName.device, at: path)
                    }
                }
            }
            // Temporary devices are forgotten ~30 s after they were last seen.
            if device.exported && !device.connected && !device.spec.known && !started
                && t - device.lastSeen > timing.temporaryTimeout
            {
                unexportGATT(path)
                connection?.unexport(at: path)
                devices[path]?.exported = false
                log.record("device-removed", ["path": path.rawValue])
            }
            reapReleasedSockets(path)
        }
    }

    func isDue(_ event: Scenario.Event, at t: Double) -> Bool {
        if let at = event.at { return at <= t }
        if let count = event.afterNotifications { return notificationsInAll >= count }
        return lastEventAt + (event.after ?? 0) <= t
    }

    func runEvents(until t: Double) {
        let events = scenario.events
        while eventsDone < events.count && isDue(events[eventsDone], at: t) {
            let event = events[eventsDone]
            eventsDone += 1
            lastEventAt = t
            switch event.type {
            case "adapter-power":
                let name = event.adapter ?? adapterOrder.first ?? "hci0"
                let on = event.powered ?? true
                Task { try? await self.power(name, on) }
            case "bluetoothd-restart":
                let downFor = event.downFor ?? 1
                Task { await self.restart(downFor: downFor) }
            case "battery":
                if let address = event.device.flatMap({ SimulatedAddress($0) }), let percent = event.percent {
                    setBattery(address, percent)
                }
            default:
                break
            }
        }
    }
}
