public import ArgumentParser
import BlueZ
import HeartRate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `hrm watch`: live heart rate from one strap, reconnecting by itself after a drop.
public struct WatchCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Connect to a heart-rate monitor and print live measurements.",
        discussion: """
            DEVICE is an address (AA:BB:CC:DD:EE:FF) or a case-insensitive part of the name. \
            Without it hrm uses the last device it watched, else the monitor with the strongest \
            signal a short scan finds.

            On a terminal hrm shows a live line; into a pipe one line per event; --json prints \
            JSON lines (see the README) and --csv a header and one row per measurement. After a \
            drop hrm reconnects by itself (0.5 s to 5 s between attempts) unless --no-reconnect. \
            Ctrl-C stops notifications, disconnects and exits 0.

            Exit status: 0 on a clean stop, 1 when the device was not found (or the link dropped \
            with --no-reconnect), 69 when Bluetooth is unavailable, 77 when access is denied.
            """
    )

    @Argument(help: "Address or part of the name of the monitor.")
    public var device: String?

    @Flag(help: "Print JSON lines.")
    public var json = false

    @Flag(help: "Print CSV: a header and one row per measurement.")
    public var csv = false

    @Option(help: "Stop after this many measurements.")
    public var count: Int?

    @Option(help: "Stop after this many seconds.")
    public var duration: Double?

    @Option(help: "The adapter to use: a name (hci0) or an address.")
    public var adapter: String?

    @Flag(help: "Exit when the link drops instead of reconnecting.")
    public var noReconnect = false

    @Flag(help: "Power the adapter on if it is off.")
    public var powerOn = false

    @Option(help: "How long to look for the device, in seconds.")
    public var scanTimeout: Double = 10

    public init() {}

    public func validate() throws {
        if json && csv { throw ValidationError("--json and --csv cannot be used together") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be above 0") }
        if scanTimeout <= 0 { throw ValidationError("--scan-timeout must be above 0") }
    }

    public func run() async throws {
        StandardOutput.prepare()
        let options = WatchOptions(
            device: device, json: json, csv: csv, count: count, duration: duration, adapter: adapter,
            noReconnect: noReconnect, powerOn: powerOn, scanTimeout: scanTimeout)
        // Ctrl-C and SIGTERM end the session cleanly: it stops notifications and disconnects.
        let status = await Interruption.cancelling { await WatchSession(options: options).run() }
        if status != 0 { throw ExitCode(status) }
    }
}

/// The watch command's choices, as plain values.
struct WatchOptions: Sendable {
    var device: String?
    var json: Bool
    var csv: Bool
    var count: Int?
    var duration: Double?
    var adapter: String?
    var noReconnect: Bool
    var powerOn: Bool
    var scanTimeout: Double
}

/// One `watch` run: finds the device, connects, streams, reconnects, cleans up.
actor WatchSession {
    let options: WatchOptions
    let printer: EventPrinter
    /// Measurements and malformed notifications printed so far, over every connection.
    var counts = MeasurementSink.Counts()
    /// The battery level last reported (in `info` or a `battery` event), once `info` is out.
    var battery: Int? = nil
    var infoReported = false
    let started = ContinuousClock.now

    init(options: WatchOptions) {
        self.options = options
        let renderer: any EventRenderer =
            if options.json { JSONLinesRenderer() } else if options.csv {
                CSVRenderer()
            } else if StandardOutput.isTerminal {
                LiveRenderer(colour: getenv("NO_COLOR") == nil)
            } else { TextLinesRenderer() }
        printer = EventPrinter(renderer: renderer, json: options.json)
    }

    /// Prints `event`. A closed pipe (`| head`) stops the session like Ctrl-C: release,
    /// disconnect, exit 0.
    func emit(_ event: MonitorEvent) {
        if !printer.emit(event) { withUnsafeCurrentTask { $0?.cancel() } }
    }

    func status(_ state: MonitorEvent.State, _ device: String?, _ detail: String? = nil) {
        emit(MonitorEvent(device: device, kind: .status(state, detail: detail)))
    }

    var reachedLimit: Bool {
        if let count = options.count, counts.measurements >= count { return true }
        if let duration = options.duration, ContinuousClock.now - started >= .seconds(duration) {
            return true
        }
        return false
    }

    func run() async -> Int32 {
        if let header = printer.header { printer.raw(header) }
        let client: BlueZClient
        do {
            client = try await BlueZClient.connect()
        } catch {
            return printer.report(error)
        }
        let status: Int32
        do {
            status = try await watch(client)
        } catch {
            status = printer.report(error)
        }
        printer.finish()
        await client.close()
        return status
    }

    func watch(_ client: BlueZClient) async throws(BlueZError) -> Int32 {
        var adapter = try await client.selectAdapter(options.adapter)
        if !adapter.powered {
            guard options.powerOn else {
                throw BlueZError(.adapterPoweredOff, "the adapter \(adapter.name) is powered off")
            }
            adapter = try await client.powerOn(adapter)
        }
        guard let target = try await findDevice(client, adapter) else {
            if Task.isCancelled {
                // Ctrl-C while looking: a stop asked for, not a device missing.
                status(.stopped, nil, summary)
                return 0
            }
            let what = options.device.map { "'\($0)'" } ?? "heart-rate monitor"
            emit(
                MonitorEvent(
                    device: nil,
                    kind: .error(
                        code: "device_not_found", message: "no \(what) found in \(options.scanTimeout) s",
                        hex: nil)))
            if !options.json {
                StandardOutput.diagnostic(
                    "  hint: chest straps advertise only while worn, with moistened electrodes")
            }
            return 1
        }
        let address = target.address.description
        StateStore(environment: environment())?.remember(address)
        let levels = await client.batteryLevels(target.path)
        let batteryWatch = Task { [weak self] in
            for await percent in levels { await self?.batteryChanged(percent, address) }
        }
        defer { batteryWatch.cancel() }

        var backoff = Backoff()
        var weConnected = false
        var firstConnection = true
        var stopping: Characteristic? = nil
        while !Task.isCancelled {
            status(firstConnection ? .connecting : .reconnecting, address)
            do {
                if !firstConnection { try await rediscover(client, adapter, target) }
                weConnected =
                    try await client.connect(target.path, require: [BluetoothUUID(0x2A37)]) || weConnected
            } catch {
                if Task.isCancelled { break }
                // Once watching, an adapter switched off or a bluetoothd restarting is a pause like
                // a drop: keep trying. Before that, it is an answer the user needs now.
                let unavailable: Set<BlueZError.Code> = [
                    .adapterPoweredOff, .bluetoothdNotRunning, .noAdapter,
                ]
                if options.noReconnect || error.code == .accessDenied
                    || (firstConnection && unavailable.contains(error.code))
                {
                    throw error
                }
                let delay = backoff.delay()
                status(.disconnected, address, "\(error.message); retrying in \(delay)")
                await client.pause(delay)
                continue
            }
            backoff.reset()
            status(.connected, address)
            if firstConnection {
                let info = await client.info(target.path)
                emit(
                    MonitorEvent(
                        device: address,
                        kind: .info(
                            name: info.name ?? target.displayName,
                            location: info.bodySensorLocation.map(BodySensorLocation.init(rawValue:)),
                            battery: info.battery, manufacturer: info.manufacturer, model: info.model)))
                battery = info.battery
                infoReported = true
                firstConnection = false
            }
            guard
                let measurement = await client.characteristics(of: target.path).first(where: {
                    $0.uuid == BluetoothUUID(0x2A37)
                })
            else {
                throw BlueZError(.bluez, "the device has no Heart Rate Measurement characteristic")
            }
            let sink = MeasurementSink(
                printer: printer, address: address, countLimit: options.count, counts: counts)
            let notifications: AsyncStream<NotificationEvent>
            do {
                notifications = try await client.notifications(measurement, inline: sink.handle)
            } catch {
                // Ctrl-C or a closed pipe while subscribing: nothing to release but the link.
                if Task.isCancelled { break }
                throw error
            }
            let finished = await stream(notifications, sink)
            if finished || Task.isCancelled {
                stopping = measurement
                break
            }
            // The link dropped.
            status(.disconnected, address)
            if options.noReconnect { return 1 }
            try? await Task.sleep(for: backoff.delay())
        }
        // Clean up outside the cancelled task (Ctrl-C cancels it, and cancelled calls are not
        // sent): notifications released first, then the connection hrm made.
        let release = stopping
        let disconnect = weConnected
        let path = target.path
        await Task {
            if let release { await client.releaseNotifications(release) }
            if disconnect { try? await client.disconnect(path) }
        }.value
        status(.stopped, address, summary)
        return 0
    }

    /// For the `stopped` status: how many measurements, and malformed notifications if any.
    var summary: String {
        let (measurements, malformed) = (counts.measurements, counts.malformed)
        let counted = "\(measurements) measurement\(measurements == 1 ? "" : "s")"
        guard malformed > 0 else { return counted }
        return counted + ", \(malformed) malformed notification\(malformed == 1 ? "" : "s") skipped"
    }

    func batteryChanged(_ percent: Int, _ address: String) {
        guard infoReported, percent != battery else { return }
        battery = percent
        emit(MonitorEvent(device: address, kind: .battery(percent: percent)))
    }

    /// Waits while `sink` prints the notifications; true when a limit was reached (or the run
    /// was cancelled, or stdout closed), false when the stream ended because the link dropped.
    func stream(_ notifications: AsyncStream<NotificationEvent>, _ sink: MeasurementSink) async -> Bool {
        enum End { case dropped, limit }
        let deadline = options.duration.map { started + .seconds($0) }
        let end = await withTaskGroup(of: End.self) { group in
            // Ending this iteration (cancelAll) releases the notifications.
            group.addTask {
                for await _ in notifications {}
                return .dropped
            }
            group.addTask {
                for await _ in sink.stops { return .limit }
                return .limit
            }
            if let deadline {
                group.addTask {
                    try? await Task.sleep(until: deadline)
                    return .limit
                }
            }
            let first = await group.next() ?? .limit
            group.cancelAll()
            return first
        }
        counts = sink.current
        return end == .limit || Task.isCancelled || reachedLimit
    }

    /// After bluetoothd restarted (or forgot the strap), the device object exists again only once
    /// a scan sees it advertise: look for it, as long as --scan-timeout allows.
    func rediscover(_ client: BlueZClient, _ adapter: Adapter, _ target: DiscoveredDevice)
        async throws(BlueZError)
    {
        guard await client.device(target.address, on: adapter) == nil else { return }
        let stream = try await client.discover(adapter: adapter)
        for await device in stream.until(ContinuousClock.now + .seconds(options.scanTimeout))
        where device.address == target.address {
            return
        }
        throw BlueZError(.deviceNotFound, "\(target.address) is not advertising")
    }

    /// By address, by part of the name, the last device watched, or the strongest monitor around.
    func findDevice(_ client: BlueZClient, _ adapter: Adapter) async throws(BlueZError) -> DiscoveredDevice? {
        var wanted = options.device
        if wanted == nil, let last = StateStore(environment: environment())?.lastDevice() { wanted = last }
        if let wanted, let address = BluetoothAddress(wanted),
            let known = await client.device(address, on: adapter)
        {
            return known
        }
        let stream = try await client.discover(adapter: adapter)
        status(.scanning, nil)
        let limit = ContinuousClock.now + .seconds(options.scanTimeout)
        var best: DiscoveredDevice? = nil
        let pickStrongestAfter = ContinuousClock.now + .seconds(min(options.scanTimeout, 3))
        // A remembered device that is not around gives way to the strongest monitor after 3 s:
        // ticks make that choice even when bluetoothd reports nothing new (an unknown RSSI).
        let remembered = options.device == nil
        for await update in stream.ticking(every: .milliseconds(250)).until(limit) {
            if case .element(let device) = update {
                if best == nil || (device.rssi ?? -999) > (best?.rssi ?? -999) { best = device }
                if let wanted {
                    if let address = BluetoothAddress(wanted) {
                        if device.address == address { return device }
                    } else if let name = device.displayName, name.lowercased().contains(wanted.lowercased()) {
                        return device
                    }
                }
            }
            if (wanted == nil || remembered) && ContinuousClock.now >= pickStrongestAfter, let best {
                return best
            }
        }
        return options.device == nil ? best : nil
    }

    nonisolated func environment() -> [String: String] {
        var result: [String: String] = [:]
        for key in ["XDG_STATE_HOME", "HOME"] {
            if let value = getenv(key) { result[key] = String(cString: value) }
        }
        return result
    }
}
