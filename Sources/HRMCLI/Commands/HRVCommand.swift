public import ArgumentParser
import HRV

/// `hrm hrv`: RR intervals from files or standard input in, heart-rate variability out, over the
/// whole input or per window. No Bluetooth involved.
public struct HRVCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hrv",
        abstract: "Heart-rate variability of recorded RR intervals, over the whole input or per window.",
        discussion: """
            Reads RR intervals from each FILE in order (- or no FILE: standard input) and prints \
            RMSSD, SDNN, pNN50, mean NN, mean heart rate and DFA alpha1 over all of them, or per \
            window of beat time with --window (the sum of the NN intervals from the first beat; \
            only complete windows are printed). All the input is read and checked before anything \
            is printed.

            Each line is read on its own, so forms may be mixed:
              812.5                          an RR interval in milliseconds
              {"type":"measurement",...}     a line of hrm watch --json: its rr_ms; other types \
            are skipped, and a status line "disconnected" (or "stopped") is a gap
              time,device,bpm,...,rr_ms,...  a header of hrm watch --csv: the rows after it give \
            their rr_ms column (found by name; intervals separated by spaces)
            Blank lines and lines starting with # are skipped. RR intervals must be above 0 and \
            below 5000 ms.

            Missed, extra and ectopic beats are corrected first (--no-correction: taken as they \
            are). A gap and the end of each FILE end a run: no successive difference spans them.

            --json prints one line per result, with the keys of hrm watch's hrv events: \
            {"type":"hrv","beats":600,"artefacts":0,"mean_nn_ms":953.15,...,"alpha1":0.32}; per \
            window, "start" and "end" (seconds of beat time) come right after "type".

            Examples:
              hrm hrv session.jsonl
              hrm watch --json --duration 5m | hrm hrv
              hrm hrv --json --window 5m --step 1m session.csv

            Exit status: 0 on success, 65 when a line is not an RR interval or the input has \
            none (or covers less than one window); the message names the file and line, and \
            nothing is printed on stdout. 66 when a FILE cannot be read, 64 for usage errors.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "Files of RR intervals, read in order; - is standard input (the default).", valueName: "file"))
    public var files: [String] = []

    @Option(
        parsing: .unconditional,
        help: "Metrics per window of beat time: seconds, or with a unit (30s, 5m). Default: the whole input.",
        transform: Seconds.parsing)
    public var window: Seconds?

    @Option(
        parsing: .unconditional,
        help: "How far each window starts after the one before (30s, 1m). Default: the window (no overlap).",
        transform: Seconds.parsing)
    public var step: Seconds?

    @Flag(help: "Take the RR intervals as they are: no artefact correction.")
    public var noCorrection = false

    @Flag(help: "Print one JSON object per line instead of text.")
    public var json = false

    public init() {}

    public func validate() throws {
        if step != nil, window == nil { throw ValidationError("--step needs --window") }
    }

    public func run() throws {
        StandardOutput.prepare()
        let sources = files.isEmpty ? ["-"] : files
        var runs: [[Double]] = []
        for path in sources {
            let text: String
            do {
                text = try RRInput.contents(of: path)
            } catch {
                StandardOutput.diagnostic("hrm hrv: \(error)")
                throw ExitCode(66)  // EX_NOINPUT
            }
            do {
                var warnings: [String] = []
                runs += try RRInput.runs(in: text, source: RRInput.name(of: path), warnings: &warnings)
                for warning in warnings { StandardOutput.diagnostic("hrm hrv: warning: \(warning)") }
            } catch {
                StandardOutput.diagnostic("hrm hrv: \(error)")
                throw ExitCode(65)  // EX_DATAERR
            }
        }
        let intervals = runs.reduce(0) { $0 + $1.count }
        guard intervals > 0 else { throw failure("no RR intervals in input") }

        // Each run corrected on its own, as the corrector's endRun would (ArtefactCorrectorTests).
        let beats = runs.flatMap { HRV.correct(rr: $0, correcting: !noCorrection) }
        guard !beats.isEmpty else { throw failure("no beats left after artefact correction") }

        let spans: [HRVSpan]
        let covered = beats.reduce(0) { $0 + $1.milliseconds } / 1000
        if let window {
            let step = step?.value ?? window.value
            spans = HRVWindows.windows(beats, window: window.value, step: step)
            guard !spans.isEmpty else {
                throw failure(
                    "the input covers \(HRVText.time(covered)) of beats, less than one --window of \(HRVText.time(window.value))"
                )
            }
        } else {
            spans = [HRVWindows.whole(beats)]
        }

        let output = LineWriter()
        if json {
            for span in spans { output.line(Self.jsonLine(span, windowed: window != nil)) }
        } else {
            output.line(header(intervals: intervals, covered: covered))
            for span in spans {
                output.line(
                    "\(HRVText.time(span.start))-\(HRVText.time(span.end))  \(HRVRendering.text(span.metrics))"
                )
            }
        }
        output.flush()
    }

    /// `{"type":"hrv","start":0,"end":60,"beats":...}`: `start` and `end` (seconds of beat time)
    /// right after `type`, and only per window; then watch's `hrv` fields (`HRVRendering`).
    static func jsonLine(_ span: HRVSpan, windowed: Bool) -> String {
        var line = JSONLine(type: "hrv")
        if windowed {
            addSeconds("start", span.start, to: &line)
            addSeconds("end", span.end, to: &line)
        }
        HRVRendering.addFields(of: span.metrics, to: &line)
        return line.line
    }

    /// Whole seconds as integers (`60`, not `60.0`), else to the millisecond.
    private static func addSeconds(_ key: String, _ seconds: Double, to line: inout JSONLine) {
        let milliseconds = (seconds * 1000).rounded()
        if milliseconds.truncatingRemainder(dividingBy: 1000) == 0, milliseconds.magnitude < 1e15 {
            line.add(key, Int(milliseconds / 1000))
        } else {
            line.add(key, milliseconds / 1000)
        }
    }

    /// `600 RR intervals, 9:32 of beats, artefact correction on` (and the windows, if any).
    private func header(intervals: Int, covered: Double) -> String {
        var text =
            "\(intervals) RR interval\(intervals == 1 ? "" : "s"), \(HRVText.time(covered)) of beats, artefact correction \(noCorrection ? "off" : "on")"
        if let window {
            let step = step?.value ?? window.value
            text +=
                "; windows of \(HRVText.time(window.value)) every \(HRVText.time(step)), complete ones only"
        }
        return text
    }

    private func failure(_ message: String) -> ExitCode {
        StandardOutput.diagnostic("hrm hrv: \(message)")
        return ExitCode(65)  // EX_DATAERR
    }
}
