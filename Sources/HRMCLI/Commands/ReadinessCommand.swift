public import ArgumentParser
public import Monitor
import Outputs
import SessionLibrary
import Threads

/// `hrm readiness`: a guided morning reading, scored against the person's own baseline.
public struct ReadinessCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "readiness",
        abstract: "Take a morning HRV reading and compare it with your own baseline.",
        discussion: """
            A morning reading as the HRV apps take it: lying still on your back, straight after \
            waking, with the strap on. hrm connects to the strap as hrm watch does (DEVICE as \
            there; without it, the last strap watched or the strongest around), says when to lie \
            still, and counts down --duration (2 minutes by default, 1 to 10) of beats: on a \
            terminal a countdown line on stderr, elsewhere a line every 30 s.

            Then, from the beats after artefact correction (as hrm hrv corrects them): ln RMSSD \
            and the resting heart rate, which here is the mean heart rate over the reading \
            (60000 / the mean NN interval; not hrm trends' lowest 5 minutes of a session). Each is \
            set against your baseline: the mean of your readings of the last 7 days, with a \
            normal range around it one standard deviation (of the last 30 days' readings) wide \
            either side, and said to be within your normal range, lower than usual or higher than usual. Until \
            the last 7 days hold 3 readings the baseline is still being built (hrm says how many \
            it has). Every strap's readings count: HRV is the person's.

            A reading is refused, not scored, when more than 5 % of its beats had to be \
            corrected (stderr says how many, and why that matters), and when it has too few \
            beats (under 40, or covering less than 90 % of --duration: a link that dropped, a \
            strap that sends no RR intervals). The link dropping ends the reading.

            The reading is recorded as hrm record records (in the sessions folder, command \
            "readiness"), its recording ending with a "readiness" line that holds the result; \
            the session library's index keeps a row per scored reading, from that line, and the \
            baseline is read from there. --json prints one JSON object: time, scored, refused, \
            beats, corrected_beats, seconds, ln_rmssd, rmssd_ms, resting_hr, baseline \
            ("built" or "building"), baseline_readings_7d and _30d, for ln_rmssd and resting_hr \
            the _mean_7d, _sd_30d, _low, _high and _verdict (within, lower, higher), and the \
            recording's path.

            Exit status: 0 for a scored reading; 65 when it was refused (too many corrected \
            beats, too few beats); 1 when there was no reading (no strap found, or interrupted \
            before the reading was complete); 73 when the sessions folder cannot be made; 74 \
            when the recording was not kept (the result is printed all the same, and not kept); \
            otherwise as hrm watch (69 no bus or bluetoothd, 77 permission).
            """
    )

    @Argument(
        help: ArgumentHelp(
            "Address or part of the name of the strap; ADAPTER/DEVICE to reach it through another adapter.",
            valueName: "device"))
    public var device: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long the reading takes, in beats: seconds, or with a unit (90s, 2m). 1 to 10 minutes.",
            valueName: "duration"),
        transform: Seconds.parsing)
    public var duration: Seconds?

    @Flag(help: "Print the result as one JSON object.") public var json = false

    @OptionGroup public var bluetooth: AdapterOptions

    @OptionGroup public var search: SearchOptions

    @OptionGroup(title: "Logging") public var log: LogOptions

    /// The reading's length without `--duration`.
    static let defaultDuration = 120.0
    /// How long past the reading's length the wall clock may run once the first beat came
    /// before the reading ends with what it has (a strap that sends no RR intervals).
    static let allowance: Duration = .seconds(30)

    public init() {}

    public func validate() throws {
        if let device, StrapRequest(parsing: device).wanted.isEmpty {
            throw ValidationError("DEVICE must not be empty: it would match any strap")
        }
        if let duration, duration.value < 60 || duration.value > 600 {
            throw ValidationError("--duration takes 1 to 10 minutes (60 to 600 s)")
        }
    }

    /// The reading's length, seconds.
    var wanted: Double { duration?.value ?? Self.defaultDuration }

    public func run() async throws {
        StandardOutput.prepare()
        guard let folder = SessionsFolder.fromEnvironment() else {
            StandardOutput.diagnostic(
                "hrm readiness: neither XDG_DATA_HOME nor HOME is set to an absolute path: nowhere to keep the reading"
            )
            throw ExitCode(73)
        }
        let collector = ReadingCollector(wanted: wanted)
        let recording = RecordingOutcome()
        let options = WatchOptions(
            command: "readiness", straps: device.map { [StrapRequest(parsing: $0)] } ?? [],
            bluetooth: bluetooth.choice, scanTimeout: search.chosenScanTimeout,
            outputs: [
                RecordingOutput(choice: .sessions(folder), outcome: recording),
                ReadingCollectorOutput(collector: collector, allowance: Self.allowance),
            ],
            display: ReadinessDisplay(collector: collector),
            console: StandardConsole(command: "readiness", json: json), logs: HRMLog.session)
        let status = await WatchSession.run(options)
        let progress = collector.progress
        guard let ending = progress.ending else {
            if status != 0 { throw ExitCode(status) }
            StandardOutput.diagnostic(
                "hrm readiness: interrupted before the reading was complete: not scored")
            throw ExitCode(1)
        }
        let outcome = ReadinessScore.score(runs: [progress.rr], wanted: wanted)
        let time = Timestamp.now()
        let worker = WorkerThread(named: "hrm-readiness")
        defer { worker.stop() }
        let path = recording.keptPath
        let (kept, entries) = await worker.run { () -> (String?, [LibraryEntry]?) in
            Self.keep(outcome, time: time, at: path, in: folder)
        }
        var baseline: ReadinessBaseline? = nil
        if case .scored = outcome {
            let name = kept.map { String($0.dropFirst(folder.path.count + 1)) }
            var prior: [ReadinessBaseline.Prior] = []
            for entry in entries ?? [] where entry.name != name {
                guard case .session(let summary, _) = entry.kind, let figures = summary.readiness else {
                    continue
                }
                prior.append(ReadinessBaseline.Prior(start: summary.start, figures: figures))
            }
            baseline = ReadinessBaseline(prior, at: time.millisecondsSinceEpoch)
        }
        let output = LineWriter()
        if json {
            output.line(ReadinessOutput.json(outcome, baseline: baseline, time: time, path: kept))
        } else if case .scored(let figures) = outcome, let baseline {
            for line in ReadinessOutput.text(figures, baseline: baseline, time: time) { output.line(line) }
        }
        output.flush()
        if ending == .dropped, outcome.refusal != nil {
            StandardOutput.diagnostic("hrm readiness: the link to the strap dropped during the reading")
        }
        if outcome.refusal != nil {
            StandardOutput.diagnostic("hrm readiness: " + ReadinessOutput.refusal(outcome, wanted: wanted))
            throw ExitCode(65)
        }
        if kept == nil {
            StandardOutput.diagnostic(
                "hrm readiness: the reading was not kept: it is not part of your baseline")
            throw ExitCode(74)
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// The result as the recording's last line, the index brought up to date (that recording,
    /// and any other new one), and every entry of the library, for the baseline; on the
    /// worker's thread (file and database calls block). The path is nil when it was not kept.
    private static func keep(
        _ outcome: ReadinessScore.Outcome, time: Timestamp, at path: String?, in folder: SessionsFolder
    )
        -> (String?, [LibraryEntry]?)
    {
        var kept = path
        if let path {
            do throws(RecordingFile.Failure) {
                try ReadinessRecording.append(RecordingLine.readiness(outcome, time: time), to: path)
            } catch {
                StandardOutput.diagnostic("hrm readiness: \(error)")
                kept = nil
            }
        }
        guard case .scored = outcome else { return (kept, nil) }
        let entries = try? SessionsCommand.libraryEntries(command: "hrm readiness", reindex: false).1
        return (kept, entries)
    }
}
