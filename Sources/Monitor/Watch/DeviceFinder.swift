package import BlueZ
package import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Finds the strap a command asks for: by address, by part of the name, the last device watched,
/// or the strongest monitor around. It prints nothing itself: `scanning` is called when a scan
/// begins (watch reports it; reset-energy does not).
package struct DeviceFinder: Sendable {
    package let client: BlueZClient
    package let adapter: Adapter
    /// An address or a part of the name; nil: the last device watched, else the strongest.
    package let wanted: String?
    package let scanTimeout: Seconds
    package var scanning: @Sendable () async -> Void = {}
    /// Told when the last device watched is not around and the strongest monitor is taken
    /// instead (perhaps someone else's): the detail of a `scanning` status.
    package var fallingBack: @Sendable (String) async -> Void = { _ in }
    /// Every monitor the scans saw, for a "not found" message.
    package let sightings = Sightings()
    /// The session's decisions: the strap chosen and why.
    package var log: Logger = SessionLogs.silent

    /// A finder on `adapter` for `wanted` (nil: the last device watched, else the strongest).
    package init(
        client: BlueZClient, adapter: Adapter, wanted: String?, scanTimeout: Seconds,
        scanning: @escaping @Sendable () async -> Void = {},
        fallingBack: @escaping @Sendable (String) async -> Void = { _ in }, log: Logger = SessionLogs.silent
    ) {
        self.client = client
        self.adapter = adapter
        self.wanted = wanted
        self.scanTimeout = scanTimeout
        self.scanning = scanning
        self.fallingBack = fallingBack
        self.log = log
    }

    /// The device, or nil when none was found in time (or the task was cancelled meanwhile).
    package func find() async throws(BlueZError) -> DiscoveredDevice? {
        var wanted = self.wanted
        if wanted == nil, let last = Self.stateStore?.lastDevice() { wanted = last }
        if self.wanted == nil, let wanted {
            log.debug("no DEVICE given: looking for the last strap watched, \(wanted)")
        }
        if let wanted, let address = BluetoothAddress(wanted),
            let known = await client.device(address, on: adapter)
        {
            log.info("chose \(known.logText): bluetoothd knows it already, no scan")
            return known
        }
        let stream = try await client.discover(adapter: adapter)
        await scanning()
        log.debug(
            "scanning for \(wanted ?? "the strongest heart-rate monitor")",
            metadata: ["timeout": "\(scanTimeout.spoken)"])
        let limit = ContinuousClock.now + scanTimeout.duration
        var best: DiscoveredDevice? = nil
        var seen: Set<BluetoothAddress> = []
        var lastNew = ContinuousClock.now
        // A remembered device that is not around gives way to the strongest monitor after 3 s.
        let rememberedGivesWayAt = ContinuousClock.now + min(scanTimeout.duration, .seconds(3))
        let remembered = self.wanted == nil
        // Ticks make the choice even when bluetoothd reports nothing new (an unknown RSSI); often
        // enough that the quiet moment ends within a tick of its 0.3 s, not up to 0.1 s later.
        for await update in stream.ticking(every: .milliseconds(20)).until(limit) {
            if case .element(let device) = update {
                sightings.saw(device)
                if seen.insert(device.address).inserted {
                    lastNew = .now
                    log.debug("candidate \(device.logText)")
                }
                if best == nil || (device.rssi ?? -999) > (best?.rssi ?? -999) { best = device }
                if let wanted, Self.matches(device, wanted) {
                    log.info("chose \(device.logText): it matches '\(wanted)'")
                    return await scanned(device)
                }
            }
            guard let best else { continue }
            if remembered, let wanted {
                guard ContinuousClock.now >= rememberedGivesWayAt else { continue }
                log.info(
                    "chose \(best.logText): the strongest of \(seen.count); the last strap watched, \(wanted), is not around"
                )
                await fallingBack(
                    "the last strap watched, \(wanted), is not around: taking the strongest monitor, \(best.address) (hrm forget stops remembering it)"
                )
                return await scanned(best)
            }
            // The choice is clear once nothing new has come for a moment, or the strongest is
            // plainly close (a strap worn by the person at the computer).
            if wanted == nil
                && (ContinuousClock.now - lastNew >= Self.quietMoment
                    || (best.rssi ?? -999) >= Self.strongSignal)
            {
                log.info(
                    "chose \(best.logText): the strongest of \(seen.count)\((best.rssi ?? -999) >= Self.strongSignal ? ", a strong signal" : ", nothing new for \(Self.quietMoment)")"
                )
                return await scanned(best)
            }
        }
        log.info(
            self.wanted == nil
                ? "scan over: \(best.map { "chose \($0.logText), the strongest of \(seen.count)" } ?? "no heart-rate monitor found")"
                : "scan over: nothing matches '\(self.wanted ?? "")' among \(seen.count)")
        guard self.wanted == nil, let best else { return nil }
        return await scanned(best)
    }

    /// `device`, chosen from a scan, once the scan is stopped: the Connect that follows would
    /// otherwise wait for it to end.
    private func scanned(_ device: DiscoveredDevice) async -> DiscoveredDevice {
        await client.stopDiscovery(on: adapter)
        return device
    }

    /// Each of `requests` (addresses or parts of names) on this adapter, in order, nil for those
    /// not found: addresses bluetoothd knows at once, the rest from one scan that ends when every
    /// one is found or after `scanFor` (the scan timeout by default). A device answers one request
    /// at most, the first it matches.
    package func find(each requests: [String], scanFor: Duration? = nil) async throws(BlueZError)
        -> [DiscoveredDevice?]
    {
        var found: [DiscoveredDevice?] = []
        for wanted in requests {
            if let address = BluetoothAddress(wanted) {
                found.append(await client.device(address, on: adapter))
            } else {
                found.append(nil)
            }
        }
        func missing() -> Bool { found.contains { $0 == nil } }
        guard missing() else { return found }
        let stream = try await client.discover(adapter: adapter)
        await scanning()
        for await device in stream.until(ContinuousClock.now + (scanFor ?? scanTimeout.duration)) {
            sightings.saw(device)
            guard !found.contains(where: { $0?.address == device.address }),
                let index = requests.indices.first(where: {
                    found[$0] == nil && Self.matches(device, requests[$0])
                })
            else { continue }
            found[index] = device
            log.info("chose \(device.logText): it matches '\(requests[index])'")
            if !missing() { break }
        }
        // The Connects that follow would wait for the scan's end.
        await client.stopDiscovery(on: adapter)
        return found
    }

    /// `--all`: every heart-rate monitor the scan finds, in the order they were found. The scan
    /// ends once one is found and nothing new came for `quiet`, or at the scan timeout.
    package func findAll(quiet: Duration = .seconds(2)) async throws(BlueZError) -> [DiscoveredDevice] {
        let stream = try await client.discover(adapter: adapter)
        await scanning()
        let limit = ContinuousClock.now + scanTimeout.duration
        var found: [DiscoveredDevice] = []
        var lastNew = ContinuousClock.now
        for await update in stream.ticking(every: .milliseconds(250)).until(limit) {
            if case .element(let device) = update, !found.contains(where: { $0.address == device.address }) {
                log.info("--all: found \(device.logText)")
                found.append(device)
                lastNew = .now
            }
            if !found.isEmpty && ContinuousClock.now - lastNew >= quiet { break }
        }
        await client.stopDiscovery(on: adapter)
        return found
    }

    /// Nothing new for this long after a monitor was found: the choice among what was found is made.
    package static let quietMoment: Duration = .milliseconds(300)
    /// A monitor this strong is taken at once: it is on the person at the computer.
    package static let strongSignal = -50

    /// After bluetoothd restarted (or forgot the strap), its device object exists again only once
    /// a scan sees it advertise: look for it, as long as the scan timeout allows.
    package func rediscover(_ target: DiscoveredDevice) async throws(BlueZError) {
        guard await client.device(target.address, on: adapter) == nil else { return }
        log.info("bluetoothd has forgotten \(target.address): scanning for it")
        let stream = try await client.discover(adapter: adapter)
        for await device in stream.until(ContinuousClock.now + scanTimeout.duration)
        where device.address == target.address {
            _ = await scanned(device)
            return
        }
        throw BlueZError(.deviceNotFound, "\(target.address) is not advertising")
    }

    /// `wanted` is the device's address, or a case-insensitive part of its name.
    package static func matches(_ device: DiscoveredDevice, _ wanted: String) -> Bool {
        if let address = BluetoothAddress(wanted) { return device.address == address }
        guard let name = device.displayName else { return false }
        return name.lowercased().contains(wanted.lowercased())
    }

    /// Where the last device watched is remembered (XDG rules), if anywhere.
    package static var stateStore: StateStore? {
        var environment: [String: String] = [:]
        for key in ["XDG_STATE_HOME", "HOME"] {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        return StateStore(environment: environment)
    }
}
