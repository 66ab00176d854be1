package import BlueZ

#if canImport(Glibc)
    import Glibc
#endif

/// The watch command's choices, as plain values.
package struct WatchOptions: Sendable {
    /// The command, for messages: `watch` or `record`.
    package var command: String = "watch"
    /// The DEVICE arguments: none for the last strap watched or the strongest one.
    package var straps: [StrapRequest] = []
    /// `--all`: every heart-rate monitor the scan finds.
    package var all: Bool = false
    package var limits: RunLimits = RunLimits()
    package var bluetooth: AdapterChoice = AdapterChoice()
    package var reconnect: Bool = true
    /// `--share`: subscribe by StartNotify, so that other programs on this machine can read the
    /// strap too (AcquireNotify, the default where offered, gives hrm the strap alone).
    package var share: Bool = false
    /// `--ecg`/`--acc`: the strap's PMD streams to run beside heart rate.
    package var sensorStreams = SensorStreams()
    package var scanTimeout: Seconds = AdapterChoice.defaultScanTimeout
    package var hrv: HRVTracker.Settings = HRVTracker.Settings()
    package var zones: HeartRateZones? = nil
    package var alertAbove: Int? = nil
    package var alertBelow: Int? = nil
    /// The person's maximum heart rate, when given (`--max-hr`): what outputs scale by.
    package var maximumHeartRate: Int? = nil
    /// Where the events go besides stdout, in the order asked for: the recording, then the
    /// outputs of `OutputArguments`, then what the command adds (`hrm serve`'s feed).
    package var outputs: [any OutputProvider] = []
    /// The display (hrm's stdout), opened after the other outputs and given each event after
    /// them; nil for none.
    package var display: (any OutputProvider)? = nil
    /// Where the session says what is for people rather than for the event stream.
    package var console: any SessionConsole = SilentConsole()
    /// The loggers of the session and of the layers below it.
    package var logs: SessionLogs = SessionLogs()

    /// Every stored property, as given.
    package init(
        command: String = "watch", straps: [StrapRequest] = [], all: Bool = false,
        limits: RunLimits = RunLimits(), bluetooth: AdapterChoice = AdapterChoice(), reconnect: Bool = true,
        share: Bool = false, sensorStreams: SensorStreams = SensorStreams(),
        scanTimeout: Seconds = AdapterChoice.defaultScanTimeout,
        hrv: HRVTracker.Settings = HRVTracker.Settings(), zones: HeartRateZones? = nil,
        alertAbove: Int? = nil, alertBelow: Int? = nil, maximumHeartRate: Int? = nil,
        outputs: [any OutputProvider] = [],
        display: (any OutputProvider)? = nil, console: any SessionConsole = SilentConsole(),
        logs: SessionLogs = SessionLogs()
    ) {
        self.command = command
        self.straps = straps
        self.all = all
        self.limits = limits
        self.bluetooth = bluetooth
        self.reconnect = reconnect
        self.share = share
        self.sensorStreams = sensorStreams
        self.scanTimeout = scanTimeout
        self.hrv = hrv
        self.zones = zones
        self.alertAbove = alertAbove
        self.alertBelow = alertBelow
        self.maximumHeartRate = maximumHeartRate
        self.outputs = outputs
        self.display = display
        self.console = console
        self.logs = logs
    }
}

/// One `watch` run: finds the strap, hands it to a connection supervisor, and sends everything
/// that happens through one pipeline (a counter, a battery filter, zones, HRV, alerts and the
/// session's summary, then the outputs) until a limit, Ctrl-C, SIGTERM or a closed stdout stops
/// it, all through one `SessionStop`.
package struct WatchSession: Sendable {
    package let options: WatchOptions
    package let stop: SessionStop
    package let counter: SessionCounter
    package let outputs: SessionOutputs
    package let pipeline: EventPipeline

    /// Runs a session for `options`: first opens its outputs (a recording's file, a broker), so
    /// that one that cannot be had is told before anything connects, then watches, stdout last.
    /// `whenStopped` runs as the session is stopped, before the strap is let go.
    package static func run(_ options: WatchOptions, whenStopped: (@Sendable () async -> Void)? = nil) async
        -> Int32
    {
        let relay = EventRelay()
        let stop = SessionStop(whenStopped: whenStopped)
        let outputs: SessionOutputs
        do throws(OutputFailure) {
            outputs = try await SessionOutputs.open(
                options.outputs + (options.display.map { [$0] } ?? []),
                OutputContext(options: options, report: relay.send, stop: stop))
        } catch {
            options.console.failedBeforeStart(error)
            return error.status
        }
        let session = WatchSession(options: options, outputs: outputs, stop: stop)
        relay.connect(session.pipeline)
        return await session.run()
    }

    package init(options: WatchOptions, outputs: SessionOutputs, stop: SessionStop) {
        self.options = options
        self.stop = stop
        self.outputs = outputs
        counter = options.limits.counter(stop)
        pipeline = EventPipeline(processors: Self.processors(options, counter), sinks: outputs.sinks)
    }

    /// Counting first (`--count` swallows what comes after its last measurement), then what
    /// annotates measurements, what adds events after them, and the summary, which sees it all.
    private static func processors(_ options: WatchOptions, _ counter: SessionCounter) -> [any EventProcessor]
    {
        var processors: [any EventProcessor] = [counter, BatteryChanges()]
        if let zones = options.zones { processors.append(ZoneTagger(zones: zones)) }
        // Alerts before HRV: an `hrv` event comes right after its measurement, and an alert the
        // same measurement set off right after that.
        if options.alertAbove != nil || options.alertBelow != nil {
            processors.append(AlertWatcher(above: options.alertAbove, below: options.alertBelow))
        }
        let hrv = HRVTracker(settings: options.hrv)
        processors.append(hrv)
        processors.append(SessionSummary(zones: options.zones, hrv: hrv))
        return processors
    }

    package func status(_ state: MonitorEvent.State, _ device: String? = nil, _ detail: String? = nil) {
        pipeline.send(MonitorEvent(device: device, kind: .status(state, detail: detail)))
    }

    /// How a run ended, before it is reported.
    package enum Ending: Sendable {
        /// Stopped (a limit, Ctrl-C, a closed stdout), with the strap it was watching if any.
        case stopped(device: String?)
        /// The link dropped and --no-reconnect was given: the strap whose link dropped (the last
        /// one, of several).
        case dropped(device: String?)
        case failed(BlueZError, device: String?)
    }

    /// The exit status: 0 on a stop, 1 when the strap was not found (or dropped without
    /// reconnecting), 69 when the bus went away, else what the failure that ended the run calls
    /// for; instead of 0, the status of an output that failed (74: the recording asked for was
    /// not kept).
    package func run() async -> Int32 {
        await stop.run {
            // Every output's own work (a queued output's task, MQTT's watcher, the display's
            // header) starts here, in the session's hands until `finish`.
            pipeline.start()
            let timer = options.limits.timer(from: .now, stop)
            defer { timer?.cancel() }
            let ending: Ending
            do throws(BlueZError) {
                let client = try await BlueZClient.connect(
                    logger: options.logs.bluez, busLogger: options.logs.dbus)
                // Losing the bus ends the session like any stop; it is reported as the failure it is.
                let busWatch = Task { if await client.busLost() { stop.stop(.busLost) } }
                ending = await watch(client)
                busWatch.cancel()
                // Discovery stopped and answered before the client closes, however the watch
                // ended: a stop while looking for the strap leaves the scan's StopDiscovery to a
                // task of its own, which close() cancels if it has not gone out yet (a loaded
                // machine). From a task of its own: this one may be cancelled.
                await Task { await client.endDiscoveries() }.value
                await client.close()
            } catch {
                ending = .failed(error, device: nil)
            }
            let status = report(ending)
            await pipeline.finish()
            return outputStatus(status)
        }
    }

    /// The status of an output that failed during a run that went well (74, EX_IOERR, for a
    /// recording not kept: a full disk, a name taken): said once more at the very end, where a
    /// user or a service manager looks. Any other failure keeps its own status.
    private func outputStatus(_ status: Int32) -> Int32 {
        guard status == 0, let verdict = outputs.verdict() else { return status }
        options.console.say("hrm \(options.command): \(verdict.message)")
        return verdict.status
    }

    private func watch(_ client: BlueZClient) async -> Ending {
        options.straps.count > 1 || options.all ? await watchSeveral(client) : await watchOne(client)
    }

    /// One strap: DEVICE, else the last one watched, else the strongest monitor around.
    private func watchOne(_ client: BlueZClient) async -> Ending {
        let request = options.straps.first
        var device: String? = nil
        do throws(BlueZError) {
            let adapter = try await options.bluetooth.usableAdapter(client, named: request?.adapter)
            let finder = DeviceFinder(
                client: client, adapter: adapter, wanted: request?.wanted, scanTimeout: options.scanTimeout,
                scanning: { status(.scanning) }, fallingBack: { status(.scanning, nil, $0) },
                log: options.logs.watch)
            guard let target = try await finder.find() else {
                // Stopped while looking: a stop asked for, not a device missing.
                if Task.isCancelled { return .stopped(device: nil) }
                let what = request?.spoken ?? "heart-rate monitor"
                return .failed(
                    BlueZError(
                        .deviceNotFound,
                        "no \(what) found in \(options.scanTimeout.spoken)"
                            + (request == nil ? "" : Sightings.told([finder.sightings]))),
                    device: nil)
            }
            device = target.address.description
            DeviceFinder.stateStore?.remember(target.address.description)
            var supervisor = ConnectionSupervisor(
                client: client, finder: finder, target: target, pipeline: pipeline,
                reconnect: options.reconnect)
            supervisor.notifyMethod = options.share ? .startNotify : .automatic
            supervisor.sensorStreams = options.sensorStreams
            switch try await supervisor.run() {
            case .stopped: return .stopped(device: device)
            case .dropped: return .dropped(device: device)
            }
        } catch {
            return .failed(error, device: device)
        }
    }

    /// Says how the run ended and gives its exit status.
    private func report(_ ending: Ending) -> Int32 {
        if stop.reason == .busLost {
            return fail(
                BlueZError(
                    .disconnected,
                    "lost the connection to the system bus (dbus-daemon stopped or restarted); bluetoothd's objects went with it"
                ))
        }
        switch ending {
        case .stopped(let device):
            return stopped(device)
        case .dropped(let device):
            // Said, then ended as a stop is (the summary, `stopped`), with the status that tells
            // a service manager the run did not end as asked: a unit with --no-reconnect restarts.
            pipeline.send(
                MonitorEvent(
                    device: device,
                    kind: .error(
                        code: EventErrorCode(.disconnected),
                        message:
                            "the link to \(device ?? "the strap") dropped and --no-reconnect was given: not reconnecting",
                        hex: nil)))
            _ = stopped(nil)
            return 1
        case .failed(let error, let device):
            // Ctrl-C while a call was on its way is a stop asked for, not a failure.
            if error.code == .cancelled || stop.reason != nil { return stopped(device) }
            return fail(error)
        }
    }

    /// The last status. (No output can hold it up: none blocks under the pipeline's lock.)
    private func stopped(_ device: String?) -> Int32 {
        pipeline.send(
            MonitorEvent(device: device, kind: .status(.stopped, detail: counter.summary)))
        return 0
    }

    /// A failure that ends the run: an `error` event (stderr, and a line in JSON output), then
    /// a hint for people where there is one.
    private func fail(_ error: BlueZError) -> Int32 {
        pipeline.send(
            MonitorEvent(
                device: nil, kind: .error(code: EventErrorCode(error.code), message: error.message, hex: nil))
        )
        if let hint = Failure.hint(error) { options.console.say("  hint: \(hint)") }
        return Failure.exitStatus(error)
    }
}
