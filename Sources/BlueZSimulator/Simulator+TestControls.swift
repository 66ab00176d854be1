import DBus

/// What tests call to make something happen exactly when they are ready for it (the scenario's
/// events use the same paths).
extension Simulator {
    /// The strap's battery level changes: Battery1's Percentage while connected (bluetoothd
    /// follows 0x2A19 notifications), and what the next connection reads. Scenario `battery`
    /// events call it; tests may too, to change the level exactly when they are ready.
    public func setBattery(address: String, percent: Int) {
        if let parsed = SimulatedAddress(address) { setBattery(parsed, percent) }
    }

    func setBattery(_ address: SimulatedAddress, _ percent: Int) {
        guard let (path, device) = devices.first(where: { $0.value.address == address }) else { return }
        devices[path]?.battery = percent
        log.record("battery", ["path": path.rawValue, "percent": percent])
        if device.connected && device.servicesResolved {
            try? connection?.setProperty(
                "Percentage", to: .byte(UInt8(clamping: percent)), interface: BlueZName.battery, at: path)
            // The strap notifies 0x2A19 too, for clients subscribed to it.
            if let level = device.layout.characteristics.first(where: { $0.role == .batteryLevel }),
                !(device.notifySessions[level.path] ?? []).isEmpty
            {
                try? connection?.setProperty(
                    "Value", to: .bytes([UInt8(clamping: percent)]), interface: BlueZName.gattCharacteristic,
                    at: level.path)
            }
        }
    }

    /// The strap sends `frames` of its 0x2A37 at once, one notification each, by socket and by
    /// signal as its clients subscribed (a burst faster than any client reads, for tests of what
    /// a client drops). Returns how many reached a client.
    public func notifyBurst(address: String, frames: [[UInt8]]) -> Int {
        guard let parsed = SimulatedAddress(address),
            let path = devices.first(where: { $0.value.address == parsed })?.key,
            let device = devices[path], device.connected, device.servicesResolved
        else { return 0 }
        var delivered = 0
        for frame in frames where deliver(frame, to: path) {
            notificationSent(path)
            delivered += 1
        }
        return delivered
    }

    /// A link drop like the scenario's `drops`, starting now, when a test is ready for it.
    public func dropLink(address: String, for seconds: Double) {
        guard let parsed = SimulatedAddress(address),
            let path = devices.first(where: { $0.value.address == parsed })?.key
        else { return }
        devices[path]?.extraDrops.append(Scenario.Drop(at: now, for: seconds))
        advance()
    }

    /// Holds the strap's Connect() calls pending (`held`) until the test lets go (false): a second
    /// call meets the first for as long as the test needs, however slow the machine, instead of
    /// for a `connectDelay`.
    public func holdConnects(address: String, _ held: Bool = true) {
        guard let parsed = SimulatedAddress(address),
            let path = devices.first(where: { $0.value.address == parsed })?.key
        else { return }
        devices[path]?.connectHeld = held
    }

    /// Whether the strap's Connect() is pending (waiting for the link), so that a test can make a
    /// second call meet it.
    public func connectPending(address: String) -> Bool {
        guard let parsed = SimulatedAddress(address) else { return false }
        return devices.values.contains { $0.address == parsed && $0.pendingConnect != nil }
    }

    /// What the scenario's `adapter-power` event does, when a test is ready for it.
    public func setAdapterPower(_ name: String, on: Bool) async {
        try? await power(name, on)
    }

    /// What the scenario's `bluetoothd-restart` event does, when a test is ready for it; returns
    /// once bluetoothd is back.
    public func restartBluetoothd(downFor: Double) async {
        await restart(downFor: downFor)
    }
}
