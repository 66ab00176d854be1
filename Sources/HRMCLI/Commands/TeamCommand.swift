public import ArgumentParser
import MQTT
public import Monitor
import Outputs
import SessionLibrary
import Threads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `hrm team [URL]`: every strap that every hrm host publishes to one MQTT broker, in one view.
public struct TeamCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "team",
        abstract: "Show every strap that hrm hosts publish to an MQTT broker.",
        discussion: """
            Subscribes to what hrm watch --mqtt publishes (see the README's topic contract) and \
            shows one live table on a terminal: host, strap, BPM, zone, state and the age of the \
            last sample, a host that went away marked offline, and left out once it has been \
            offline for --hide-offline-after (default 5 min). Into a pipe it prints a line per \
            measurement; --json prints each measurement as hrm watch --json does, with a \
            "source" field naming the host that published it.

            The broker keeps each host's last messages (retained) until they are cleared: \
            --forget HOST clears them all (its status, and each strap's state, info, bpm, \
            battery, hrv and summary), so that a host that will not come back leaves every \
            team view, Home Assistant's too.

            Exit status: 0 on Ctrl-C or a limit (--forget: once cleared), 69 when the broker \
            cannot be reached, 77 when it refuses the credentials.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The broker: mqtt://[user:password@]host[:port] or mqtts://… (default: url in the config file's [mqtt]).",
            valueName: "url"))
    public var url: String?

    @Flag(help: "JSON lines: each measurement with a \"source\" field.")
    public var json = false

    // The default is in the help text: optional, so that the config file's prefix is taken
    // when the option is not given.
    @Option(help: ArgumentHelp("The first level of hrm's topics. (default: hrm)", valueName: "prefix"))
    public var mqttPrefix: String?

    @Option(help: ArgumentHelp("Trust this CA file for mqtts:// (default: the system's).", valueName: "path"))
    public var mqttCafile: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Leave a host out of the table once it has been offline this long: seconds, or 30s, 5m, 2h. (default: 5m)",
            valueName: "time"),
        transform: Seconds.parsing)
    public var hideOfflineAfter: Seconds?

    @Option(
        help: ArgumentHelp(
            "Clear every message the broker keeps for this host, then exit.", valueName: "host"))
    public var forget: String?

    @OptionGroup public var limits: LimitOptions

    @OptionGroup public var configFile: ConfigOptions

    public init() {}

    public func validate() throws {
        if let url {
            do throws(MQTTError) {
                _ = try MQTTBrokerURL(parsing: url)
            } catch {
                throw ValidationError("URL: \(error.message)")
            }
        }
        if let mqttPrefix, let problem = MQTTTopics.problem(withLevel: mqttPrefix) {
            throw ValidationError("--mqtt-prefix: \(problem)")
        }
        if let forget, let problem = MQTTTopics.problem(withLevel: forget) {
            throw ValidationError("--forget: \(problem)")
        }
    }

    public mutating func run() async throws {
        StandardOutput.prepare()
        try applyConfigFile()
        guard let url else {
            StandardOutput.diagnostic(
                "hrm team: give the broker's URL (hrm team mqtt://broker.local), or url in the config file's [mqtt]"
            )
            throw ExitCode(64)
        }
        guard let broker = try? MQTTBrokerURL(parsing: url) else { throw ExitCode(64) }
        let view = TeamView(
            broker: broker, prefix: mqttPrefix ?? "hrm", caFile: mqttCafile, json: json,
            limits: limits.runLimits, hideOfflineAfter: hideOfflineAfter?.duration ?? .seconds(300))
        let status: Int32
        if let forget { status = await view.forget(forget) } else { status = await view.run() }
        if status != 0 { throw ExitCode(status) }
    }
}

/// One `hrm team` run: connects, subscribes, and shows what comes until Ctrl-C or a limit.
struct TeamView: Sendable {
    let broker: MQTTBrokerURL
    let prefix: String
    let caFile: String?
    let json: Bool
    let limits: RunLimits
    var hideOfflineAfter: Duration = .seconds(300)

    /// A client connected to the broker, or the exit status that says why not.
    private func connected() async -> Result<MQTTClient, ExitCode> {
        var options = MQTTOptions(clientID: "hrm-team-\(MQTTArguments.hostName)-\(ProcessID.current)")
        options.caFile = caFile
        do throws(MQTTError) {
            let client = try MQTTClient(broker, options: options)
            do throws(MQTTError) {
                try await client.connect()
            } catch {
                await client.close(within: .zero)
                throw error
            }
            return .success(client)
        } catch {
            StandardOutput.diagnostic("hrm team: MQTT: \(error.message)")
            return .failure(ExitCode(error.code == .refused ? 77 : 69))
        }
    }

    /// `--forget HOST`: every retained message under the host's topics cleared (an empty retained
    /// payload each), so that the broker forgets it. The retained messages come right after the
    /// subscription; a marker published to a topic of the same subscription comes back after
    /// them, so the list is complete without waiting on a clock.
    func forget(_ host: String) async -> Int32 {
        let client: MQTTClient
        switch await connected() {
        case .success(let connected): client = connected
        case .failure(let status): return status.rawValue
        }
        let marker = "\(prefix)/\(host)/hrm-team-forget-\(ProcessID.current)"
        client.subscribe("\(prefix)/\(host)/#")
        client.publish(MQTTMessage(topic: marker, text: "forget", retain: false))
        var retained: [String] = []
        var online = false
        let limit = ContinuousClock.now + .seconds(10)
        for await event in client.events.until(limit) {
            guard case .message(let message) = event else { continue }
            if message.topic == marker { break }
            guard message.retain, !message.payload.isEmpty else { continue }
            if !retained.contains(message.topic) { retained.append(message.topic) }
            if message.topic == "\(prefix)/\(host)/status", message.payload == Array("online".utf8) {
                online = true
            }
        }
        for topic in retained { client.publish(MQTTMessage(topic: topic, payload: [], retain: true)) }
        await client.close(within: .seconds(5))
        let left = client.outboxCount
        let shown = TerminalText.sanitised(host, limit: TerminalText.nameLimit)
        guard left == 0 else {
            StandardOutput.diagnostic(
                "hrm team: the broker did not take \(left) of the \(retained.count) clearings for \(shown)")
            return 69
        }
        StandardOutput.diagnostic(
            retained.isEmpty
                ? "hrm team: the broker keeps nothing for \(shown)"
                : "hrm team: forgot \(shown): \(retained.count) retained topic\(retained.count == 1 ? "" : "s") cleared"
                    + (online ? " (it is online: its hrm will publish again)" : ""))
        return 0
    }

    func run() async -> Int32 {
        let client: MQTTClient
        switch await connected() {
        case .success(let connected): client = connected
        case .failure(let status): return status.rawValue
        }
        for topic in MQTTTopics(prefix: prefix, host: "+").subscriptions() { client.subscribe(topic) }
        let stop = SessionStop()
        let status = await stop.run {
            let timer = limits.timer(from: .now, stop)
            defer { timer?.cancel() }
            return await show(client, stop)
        }
        await client.close(within: .seconds(1))
        return status
    }

    private func show(_ client: MQTTClient, _ stop: SessionStop) async -> Int32 {
        let terminal = !json && StandardOutput.isLiveTerminal
        let output = LineWriter(exitWhenClosed: false)
        var board = TeamBoard(prefix: prefix)
        var measurements = 0
        var drawn = 0
        var dirty = false
        let start = ContinuousClock.now
        func now() -> Int64 { Int64((ContinuousClock.now - start).inSeconds * 1000) }
        var refusalSaid = false
        // The table is kept to the screen, so that a redraw moves up at most a screenful.
        func redraw() {
            let size = TerminalWidth.size()
            let lines = TeamRendering.table(
                board, now: now(), width: size.columns, height: size.lines,
                forgetAfter: Int64(hideOfflineAfter.wholeMilliseconds))
            output.raw(clearTable() + lines.joined(separator: "\n"))
            drawn = lines.count
            dirty = false
        }
        func clearTable() -> String {
            defer { drawn = 0 }
            return drawn > 1 ? "\u{1B}[\(drawn - 1)A\r\u{1B}[J" : "\r\u{1B}[J"
        }
        // A line on stderr under a live table: the table is cleared first and drawn again below.
        func notice(_ text: String) {
            if terminal && drawn > 0 {
                output.raw(clearTable())
                output.flush()
                dirty = true
            }
            StandardOutput.diagnostic(text)
        }
        for await update in client.events.ticking(every: terminal ? .milliseconds(250) : nil) {
            guard case .element(let event) = update else {
                if terminal && (dirty || !board.rows.isEmpty) { redraw() }
                continue
            }
            switch event {
            case .message(let message):
                switch board.take(topic: message.topic, payload: message.payload, at: now()) {
                case .measurement(let row, let line):
                    measurements += 1
                    if json {
                        output.line(line, flush: true)
                    } else if terminal {
                        dirty = true
                    } else {
                        output.line(TeamRendering.line(row, clock: Timestamp.now().localClock), flush: true)
                    }
                    if let count = limits.count, measurements >= count { stop.stop(.countReached) }
                case .changed: dirty = true
                case .ignored: break
                }
                if board.refused > 0 && !refusalSaid {
                    refusalSaid = true
                    notice(
                        "hrm team: the broker holds more than \(board.capacity) straps or hosts: "
                            + "the first \(board.capacity) are kept, the rest are not shown")
                }
            case .connected:
                notice("hrm team: connected to \(broker)")
            case .disconnected(let reason):
                notice("hrm team: lost the broker at \(broker) (\(reason)); reconnecting")
            case .dropped:
                break
            }
            if output.closed { stop.stop(.outputClosed) }
        }
        if terminal {
            redraw()
            output.raw("\n")
        }
        output.flush()
        return 0
    }
}
