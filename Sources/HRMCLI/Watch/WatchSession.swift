import BlueZ
import MQTT

#if canImport(Glibc)
    import Glibc
#endif

/// The watch command's choices, as plain values.
struct WatchOptions: Sendable {
    /// The command, for messages: `watch` or `record`.
    var command = "watch"
    /// The DEVICE arguments: none for the last strap watched or the strongest one.
    var straps: [StrapRequest] = []
    /// `--all`: every heart-rate monitor the scan finds.
    var all = false
    var format: OutputFormat = .text
    var colour: ColorChoice = .auto
    var limits = RunLimits()
    var bluetooth = AdapterOptions()
    var reconnect = true
    var scanTimeout: Seconds = SearchOptions.defaultScanTimeout
    var hrv = HRVTracker.Settings()
    var zones: HeartRateZones? = nil
    var alertAbove: Int? = nil
    var alertBelow: Int? = nil
    var onAlert: String? = nil
    var recording: RecordingChoice? = nil
    var mqtt: MQTTSettings? = nil
}

/// One `watch` run: finds the strap, hands it to a connection supervisor, and sends everything
/// that happens through one pipeline (a counter, a battery filter, zones, HRV, alerts and the
/// session's summary, then `--on-alert` and stdout) until a limit, Ctrl-C, SIGTERM or a closed
/// stdout stops it, all through one `SessionStop`.
struct WatchSession: Sendable {
    let options: WatchOptions
    let stop: SessionStop
    let counter: SessionCounter
    let stdout: StdoutSink
    let pipeline: EventPipeline
    /// Whether the recording asked for was kept; nil when none was asked for.
    let recording: RecordingOutcome?

    /// Runs a session for `options`: first makes sure a recording can be written (a path that
    /// exists, a folder that cannot be made: told before connecting, exit 73), then watches.
    /// `extraSinks` (`hrm serve`'s feed) get every event after the others; `whenStopped` runs as
    /// the session is stopped, before the strap is let go.
    static func run(
        _ options: WatchOptions, extraSinks: [any EventSink] = [],
        whenStopped: (@Sendable () async -> Void)? = nil
    ) async -> Int32 {
        var target: RecordingSink.Target? = nil
        if let recording = options.recording {
            do throws(RecordingFile.Failure) {
                switch recording {
                case .file(let path): target = .file(try RecordingFile(creating: path))
                case .sessions(let folder):
                    try folder.prepare()
                    target = .sessions(folder)
                }
            } catch {
                return failBeforeStart(options, code: RecordingSink.failedCode, message: "\(error)") {
                    73  // EX_CANTCREAT
                }
            }
        }
        let relay = EventRelay()
        var mqtt: MQTTSink? = nil
        if let settings = options.mqtt {
            do throws(MQTTError) {
                mqtt = try await MQTTSink.connect(settings, command: options.command, report: relay.send)
            } catch {
                return failBeforeStart(options, code: error.code.rawValue, message: "MQTT: \(error.message)")
                {
                    error.code == .refused ? 77 : 69  // EX_NOPERM, EX_UNAVAILABLE
                }
            }
        }
        let session = WatchSession(
            options: options, recording: target, mqtt: mqtt, relay: relay, extraSinks: extraSinks,
            stop: SessionStop(whenStopped: whenStopped))
        return await session.run()
    }

    /// A failure before anything started: said on stderr (and as an `error` line in JSON output).
    private static func failBeforeStart(
        _ options: WatchOptions, code: String, message: String, status: () -> Int32
    ) -> Int32 {
        StandardOutput.diagnostic("hrm \(options.command): \(message)")
        if options.format == .json {
            let event = MonitorEvent(device: nil, kind: .error(code: code, message: message, hex: nil))
            LineWriter().line(MonitorEventJSON.line(event), flush: true)
        }
        return status()
    }

    init(
        options: WatchOptions, recording: sending RecordingSink.Target? = nil, mqtt: MQTTSink? = nil,
        relay: EventRelay = EventRelay(), extraSinks: [any EventSink] = [], stop: SessionStop = SessionStop()
    ) {
        self.options = options
        self.stop = stop
        counter = options.limits.counter(stop)
        stdout = StdoutSink(
            renderer: StdoutSink.renderer(
                for: options.format, terminal: StandardOutput.isLiveTerminal,
                colour: options.colour.colours(live: StandardOutput.isLiveTerminal),
                several: options.straps.count > 1 || options.all),
            format: options.format, command: "watch", closed: { stop.stop(.outputClosed) })
        var queued = Self.queuedSinks(options, relay)
        if let recording {
            let outcome = RecordingOutcome()
            self.recording = outcome
            queued.insert(Self.recorder(recording, options, outcome, relay), at: 0)
        } else {
            self.recording = nil
        }
        if let mqtt { queued.append(mqtt) }
        pipeline = EventPipeline(
            processors: Self.processors(options, counter), sinks: queued + extraSinks + [stdout])
        relay.connect(pipeline)
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

    /// The recording: a queue long enough for a slow disk's hiccups (4096 events, more than an
    /// hour of a strap at 1 Hz); past that the oldest are dropped and the loss is reported.
    private static func recorder(
        _ target: sending RecordingSink.Target, _ options: WatchOptions, _ outcome: RecordingOutcome,
        _ relay: EventRelay
    ) -> QueuedSink {
        let sink = RecordingSink(
            target, start: .now(), startInstant: .now, command: options.command, outcome: outcome,
            report: relay.send)
        // Lines reach the file within 50 ms: a batch per wake-up instead of a wake-up per event.
        return QueuedSink(sink, capacity: 4096, policy: .dropOldest, gather: .milliseconds(50)) { trouble in
            guard case .dropped(let count) = trouble else { return }
            relay.send(
                MonitorEvent(
                    device: nil,
                    kind: .error(
                        code: RecordingSink.droppedCode,
                        message:
                            "\(count) event\(count == 1 ? "" : "s") came faster than the disk took them: not recorded",
                        hex: nil)))
        }
    }

    /// Sinks that do slow work on tasks of their own: before stdout, so that they get each event
    /// first.
    private static func queuedSinks(_ options: WatchOptions, _ relay: EventRelay) -> [any EventSink] {
        guard let command = options.onAlert else { return [] }
        let alerts = AlertCommand(command: command, timeout: .seconds(30), report: relay.send)
        return [
            QueuedSink(alerts, capacity: 16, policy: .dropOldest) { trouble in
                guard case .dropped(let count) = trouble else { return }
                relay.send(
                    MonitorEvent(
                        device: nil,
                        kind: .error(
                            code: AlertCommand.errorCode,
                            message:
                                "--on-alert: \(count) alert\(count == 1 ? "" : "s") came while earlier commands still ran: not run",
                            hex: nil)))
            }
        ]
    }

    func status(_ state: MonitorEvent.State, _ device: String? = nil, _ detail: String? = nil) {
        pipeline.send(MonitorEvent(device: device, kind: .status(state, detail: detail)))
    }

    /// How a run ended, before it is reported.
    enum Ending: Sendable {
        /// Stopped (a limit, Ctrl-C, a closed stdout), with the strap it was watching if any.
        case stopped(device: String?)
        /// The link dropped and --no-reconnect was given.
        case dropped
        case failed(BlueZError, device: String?)
    }

    /// The exit status: 0 on a stop, 1 when the strap was not found (or dropped without
    /// reconnecting), 69 when the bus went away, else what the failure that ended the run calls
    /// for; 74 instead of 0 when the recording asked for failed.
    func run() async -> Int32 {
        await stop.run {
            stdout.start()
            let timer = options.limits.timer(from: .now, stop)
            defer { timer?.cancel() }
            let ending: Ending
            do throws(BlueZError) {
                let client = try await BlueZClient.connect(logger: HRMLog.bluez, busLogger: HRMLog.dbus)
                // Losing the bus ends the session like any stop; it is reported as the failure it is.
                let busWatch = Task { if await client.busLost() { stop.stop(.busLost) } }
                ending = await watch(client)
                busWatch.cancel()
                await client.close()
            } catch {
                ending = .failed(error, device: nil)
            }
            let status = report(ending)
            await pipeline.finish()
            return recordingStatus(status)
        }
    }

    /// 74 (EX_IOERR) for a run that went well but lost the recording asked for (a full disk, a
    /// name taken): said once more at the very end, where a user or a service manager looks.
    /// Any other failure keeps its own status.
    private func recordingStatus(_ status: Int32) -> Int32 {
        guard status == 0, let reason = recording?.failureReason else { return status }
        StandardOutput.diagnostic("hrm \(options.command): the recording was not kept: \(reason)")
        return 74
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
                scanning: { status(.scanning) }, fallingBack: { status(.scanning, nil, $0) })
            guard let target = try await finder.find() else {
                // Stopped while looking: a stop asked for, not a device missing.
                if Task.isCancelled { return .stopped(device: nil) }
                let what = request?.spoken ?? "heart-rate monitor"
                return .failed(
                    BlueZError(.deviceNotFound, "no \(what) found in \(options.scanTimeout.spoken)"),
                    device: nil)
            }
            device = target.address.description
            DeviceFinder.stateStore?.remember(target.address.description)
            let supervisor = ConnectionSupervisor(
                client: client, finder: finder, target: target, pipeline: pipeline,
                reconnect: options.reconnect)
            switch try await supervisor.run() {
            case .stopped: return .stopped(device: device)
            case .dropped: return .dropped
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
        case .dropped:
            return 1
        case .failed(let error, let device):
            // Ctrl-C while a call was on its way is a stop asked for, not a failure.
            if error.code == .cancelled || stop.reason != nil { return stopped(device) }
            return fail(error)
        }
    }

    /// The last status: sent even when the session ends with a sink stuck, 2 s at most.
    private func stopped(_ device: String?) -> Int32 {
        pipeline.send(
            MonitorEvent(device: device, kind: .status(.stopped, detail: counter.summary)),
            waitingAtMost: .seconds(2))
        return 0
    }

    /// A failure that ends the run: an `error` event (stderr, and a line in JSON output), then
    /// a hint for people where there is one.
    private func fail(_ error: BlueZError) -> Int32 {
        pipeline.send(
            MonitorEvent(
                device: nil, kind: .error(code: error.code.rawValue, message: error.message, hex: nil)),
            waitingAtMost: .seconds(2))
        if let hint = Failure.hint(error) { StandardOutput.diagnostic("  hint: \(hint)") }
        return Failure.exitStatus(error)
    }
}
