import DBus

/// The scenario's timeline: each tick's appearances, drops and RSSI reports, and the events.
extension Simulator {
    /// One step of the scenario's timeline.
    func advance() {
        guard !down else { return }
        let t = now
        runEvents(until: t)
        if !unansweredWrites.isEmpty { endUnansweredWrites(dueBy: t) }
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
            if device.exported && !device.connected && !device.spec.known && !device.paired && !started
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
        switch event.trigger {
        case .at(let at): at <= t
        case .afterNotifications(let count): notificationsInAll >= count
        case .after(let delay): lastEventAt + delay <= t
        }
    }

    func runEvents(until t: Double) {
        let events = scenario.events
        while eventsDone < events.count && isDue(events[eventsDone], at: t) {
            let event = events[eventsDone]
            eventsDone += 1
            lastEventAt = t
            switch event {
            case .adapterPower(_, let adapter, let powered):
                let name = adapter ?? adapterOrder.first ?? "hci0"
                Task { try? await self.power(name, powered) }
            case .bluetoothdRestart(_, let downFor):
                Task { await self.restart(downFor: downFor) }
            case .battery(_, let device, let percent):
                if let address = SimulatedAddress(device) { setBattery(address, percent) }
            case .appear(_, let device):
                guard let address = SimulatedAddress(device),
                    let path = devices.first(where: { $0.value.address == address })?.key,
                    let appearAt = devices[path]?.spec.appearAt, appearAt > t
                else { break }
                devices[path]?.spec.appearAt = t
                log.record("device-appear", ["path": path.rawValue])
            }
        }
    }
}
