import BlueZ

#if canImport(Glibc)
    import Glibc
#endif

/// The watch command's choices, as plain values.
struct WatchOptions: Sendable {
    var device: String?
    var format: OutputFormat = .text
    var limits = RunLimits()
    var bluetooth = AdapterOptions()
    var reconnect = true
    var scanTimeout: Seconds = SearchOptions.defaultScanTimeout
}

/// One `watch` run: finds the strap, hands it to a connection supervisor, and sends everything
/// that happens through one pipeline (a counter, a battery filter, then stdout) until a limit,
/// Ctrl-C, SIGTERM or a closed stdout stops it, all through one `SessionStop`.
struct WatchSession: Sendable {
    let options: WatchOptions
    let stop = SessionStop()
    let counter: SessionCounter
    let stdout: StdoutSink
    let pipeline: EventPipeline

    init(options: WatchOptions) {
        self.options = options
        let stop = self.stop
        counter = options.limits.counter(stop)
        stdout = StdoutSink(
            renderer: StdoutSink.renderer(
                for: options.format, terminal: StandardOutput.isTerminal, colour: getenv("NO_COLOR") == nil),
            format: options.format, command: "watch", closed: { stop.stop(.outputClosed) })
        pipeline = EventPipeline(processors: [counter, BatteryChanges()], sinks: [stdout])
    }

    func status(_ state: MonitorEvent.State, _ device: String? = nil, _ detail: String? = nil) {
        pipeline.send(MonitorEvent(device: device, kind: .status(state, detail: detail)))
    }

    /// The exit status: 0 on a stop, 1 when the strap was not found (or dropped without
    /// reconnecting), else what the failure that ended the run calls for.
    func run() async -> Int32 {
        await stop.run {
            stdout.start()
            let timer = options.limits.timer(from: .now, stop)
            defer { timer?.cancel() }
            let status: Int32
            do throws(BlueZError) {
                let client = try await BlueZClient.connect()
                do throws(BlueZError) {
                    status = try await watch(client)
                } catch {
                    status = fail(error)
                }
                await client.close()
            } catch {
                status = fail(error)
            }
            await pipeline.finish()
            return status
        }
    }

    private func watch(_ client: BlueZClient) async throws(BlueZError) -> Int32 {
        let adapter = try await options.bluetooth.usableAdapter(client)
        let finder = DeviceFinder(
            client: client, adapter: adapter, wanted: options.device, scanTimeout: options.scanTimeout,
            scanning: { status(.scanning) })
        guard let target = try await finder.find() else {
            // Stopped while looking: a stop asked for, not a device missing.
            if Task.isCancelled { return stopped(nil) }
            let what = options.device.map { "'\($0)'" } ?? "heart-rate monitor"
            return fail(BlueZError(.deviceNotFound, "no \(what) found in \(options.scanTimeout.spoken)"))
        }
        DeviceFinder.stateStore?.remember(target.address.description)
        let supervisor = ConnectionSupervisor(
            client: client, finder: finder, target: target, pipeline: pipeline, reconnect: options.reconnect)
        switch try await supervisor.run() {
        case .stopped: return stopped(target.address.description)
        case .dropped: return 1
        }
    }

    private func stopped(_ device: String?) -> Int32 {
        status(.stopped, device, counter.summary)
        return 0
    }

    /// A failure that ends the run: an `error` event (stderr, and a line in JSON output), then
    /// a hint for people where there is one.
    private func fail(_ error: BlueZError) -> Int32 {
        pipeline.send(
            MonitorEvent(
                device: nil, kind: .error(code: error.code.rawValue, message: error.message, hex: nil)))
        if let hint = Failure.hint(error) { StandardOutput.diagnostic("  hint: \(hint)") }
        return Failure.exitStatus(error)
    }
}
