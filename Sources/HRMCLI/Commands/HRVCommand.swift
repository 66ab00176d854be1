public import ArgumentParser
import HRV
import InputFiles
public import Monitor
import Outputs
import SessionLibrary

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
            are). A gap and the end of each FILE end a run: no successive difference spans them. \
            --explain says which RR intervals were changed, numbered from 0 in the order read \
            (of a strap's own, with several straps), by kind: missed (split in two), extra (merged \
            with its neighbour), ectopic (a premature beat and its pause, both made their mean), \
            long and short (replaced by the mean of their neighbours): a line "artefacts at RR: \
            missed 150; extra 299 300" under each result, or with --json a last key with every \
            kind: "artefacts_at":{"missed":[150],"extra":[299,300],...}.

            Input from several straps (the device of hrm watch --json lines and recordings, the \
            device column of hrm watch --csv: watch --all, --record) is analysed per strap, in \
            the order the input first names them: each its own series, with its own gaps and \
            artefact correction, under a heading (its name, else its address; with --json, \
            "device" on every line). --device ADDRESS (or a part of the name) takes one strap \
            alone and prints it as input of one strap.

            --json prints one line per result, with the keys of hrm watch's hrv events: \
            {"type":"hrv","beats":600,"artefacts":0,"mean_nn_ms":953.15,...,"alpha1":0.32}; per \
            window, "start" and "end" (seconds of beat time) come right after "type".

            Examples:
              hrm hrv session.jsonl
              hrm watch --json --duration 5m | hrm hrv
              hrm hrv --json --window 5m --step 1m session.csv
              hrm hrv --rr-source ecg h10-session.jsonl

            --rr-source ecg takes the RR intervals of JSON lines and recordings from the R peaks \
            hrm found in a Polar H10's ECG (record --ecg: ecg_beat lines, their rr_ms; a null, \
            the first peak after a start or a loss, begins a new run) instead of the strap's own \
            (measurements are then skipped); plain numbers and CSV rows are read as always. The \
            default, strap, reads the measurements' RR intervals.

            Exit status: 0 on success, 65 when a line is not an RR interval or the input has \
            none (or covers less than one window; of several straps, when none has enough: the \
            others are left out, named on stderr), or a line is longer than 64 KiB; the message \
            names the file and line, and nothing is printed on stdout. 66 when a FILE cannot be \
            read or is not a regular file (a FIFO, a device: standard input may be a pipe), 64 \
            for usage errors and a --device that names no strap of the input. A recording that \
            ends in NUL bytes (a crash) is read up to them, with a warning. With --rr-source \
            ecg, input without an ecg_beat line exits 65.
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

    @Flag(help: "Say which RR intervals the artefact correction changed, and how (artefacts_at with --json).")
    public var explain = false

    @Option(
        help: ArgumentHelp(
            "Only this strap of input from several: its address, or a part of its name.",
            valueName: "address"))
    public var device: String?

    @Option(
        help: ArgumentHelp(
            "strap: the strap's RR intervals (the default); ecg: the R peaks found in a Polar H10's ECG (ecg_beat lines).",
            valueName: "strap|ecg"))
    public var rrSource: RRSourceArgument = .strap

    public init() {}

    public func validate() throws {
        if step != nil, window == nil { throw ValidationError("--step needs --window") }
    }

    public func run() throws {
        StandardOutput.prepare()
        let sources = files.isEmpty ? ["-"] : files
        var series = RRSeries()
        for path in sources {
            if path == "-" {
                StandardOutput.hintWhenTyped(
                    "hrm hrv: reading RR intervals from standard input, one a line (ms, or a recording); Ctrl-D ends"
                )
            }
            let input = try RRInput.contents(of: path, for: "hrv")
            do {
                var warnings: [String] = []
                try RRInput.gather(
                    input.text, source: input.source, into: &series, warnings: &warnings,
                    rrSource: rrSource.source)
                for warning in warnings { StandardOutput.diagnostic("hrm hrv: warning: \(warning)") }
            } catch {
                StandardOutput.diagnostic("hrm hrv: \(error)")
                throw ExitCode(65)  // EX_DATAERR
            }
        }
        if rrSource == .ecg, series.ecgBeats == 0 {
            StandardOutput.diagnostic(
                "hrm hrv: --rr-source ecg: the input has no ecg_beat line (R peaks found in a Polar H10's ECG: record it with --ecg), so no RR interval from the ECG"
            )
            throw ExitCode(65)  // EX_DATAERR
        }
        let output = LineWriter()
        if let device {
            let strap = try chosen(device, in: series)
            try printOne(strap.runs.runs, strap: strap, to: output)
        } else if series.named.count <= 1 {
            // One strap, or none named: every interval in one series, as hrv always read it.
            try printOne(series.all.runs, to: output)
        } else {
            try printEach(series.straps, to: output)
        }
        output.flush()
    }

    /// The strap `--device` names: exit 64 when it names none of the input's, or several.
    private func chosen(_ wanted: String, in series: RRSeries) throws -> RRSeries.Strap {
        let named = series.named
        let straps = named.compactMap { strap in
            strap.device.map { StrapChoice.Strap(device: $0, name: strap.name) }
        }
        let outcome = StrapChoice.pick(wanted, among: straps)
        guard case .found(let strap) = outcome, let found = named.first(where: { $0.device == strap.device })
        else {
            StandardOutput.diagnostic(
                "hrm hrv: " + StrapChoice.refusal(wanted, outcome, among: straps, in: "the input"))
            throw ExitCode(64)  // EX_USAGE
        }
        return found
    }

    /// One series, printed as hrv always printed it: exit 65 when it has nothing to show.
    private func printOne(_ runs: [[Double]], strap: RRSeries.Strap? = nil, to output: LineWriter) throws {
        let report: HRVReport
        do {
            report = try HRVReport.analyse(
                runs, correcting: !noCorrection, window: window?.value, step: step?.value, explaining: explain
            )
        } catch {
            throw failure(error.message(strap: strap.map(Self.label)))
        }
        for line in lines(of: report, device: nil) { output.line(line) }
    }

    /// Each strap on its own, in the order the input first named them, each under its heading (in
    /// JSON, `device` on every line). A strap with too little to show is told on stderr and left
    /// out; exit 65 only when every one is.
    private func printEach(_ straps: [RRSeries.Strap], to output: LineWriter) throws {
        var printed = 0
        for strap in straps where strap.device != nil || strap.runs.count > 0 {
            let report: HRVReport
            do {
                report = try HRVReport.analyse(
                    strap.runs.runs, correcting: !noCorrection, window: window?.value, step: step?.value,
                    explaining: explain)
            } catch {
                StandardOutput.diagnostic("hrm hrv: \(error.message(strap: Self.label(strap))): left out")
                continue
            }
            if !json {
                if printed > 0 { output.line("") }
                output.line(Self.heading(strap))
            }
            for line in lines(of: report, device: .some(strap.device)) { output.line(line) }
            printed += 1
        }
        guard printed > 0 else { throw failure("no strap of the input has enough beats") }
    }

    /// The lines of one report; `device` (with JSON) puts `device` on every line, null for the
    /// lines that named no strap.
    private func lines(of report: HRVReport, device: String??) -> [String] {
        if json { return report.spans.map { Self.jsonLine($0, windowed: window != nil, device: device) } }
        return [header(intervals: report.intervals, covered: report.covered)]
            + report.spans.flatMap { span in
                let line =
                    "\(HRVText.time(span.start))-\(HRVText.time(span.end))  \(HRVRendering.text(span.metrics))"
                guard let explained = span.explained else { return [line] }
                return [line, "  " + HRVRendering.artefactsText(explained)]
            }
    }

    /// `HRM-Pro:123456 (C0:FF:EE:00:00:01)`, or the address alone when no `info` line named it.
    static func heading(_ strap: RRSeries.Strap) -> String {
        guard let device = strap.device else { return "(lines that name no strap)" }
        let address = TerminalText.sanitised(device, limit: TerminalText.nameLimit)
        guard let name = strap.name else { return address }
        return TerminalText.sanitised(name, limit: TerminalText.nameLimit) + " (\(address))"
    }

    /// A strap in messages.
    static func label(_ strap: RRSeries.Strap) -> String {
        guard let device = strap.device else { return "the lines that name no strap" }
        return StrapChoice.label(StrapChoice.Strap(device: device, name: strap.name))
    }

    /// `{"type":"hrv","start":0,"end":60,"beats":...}`: `device` right after `type` when the input
    /// is of several straps, `start` and `end` (seconds of beat time) only per window; then
    /// watch's `hrv` fields (`HRVRendering`).
    static func jsonLine(_ span: HRVSpan, windowed: Bool, device: String?? = nil) -> String {
        var line = JSONLine(type: "hrv")
        if let device { line.add("device", device) }
        if windowed {
            addSeconds("start", span.start, to: &line)
            addSeconds("end", span.end, to: &line)
        }
        HRVRendering.addFields(of: span.metrics, to: &line)
        if let explained = span.explained { HRVRendering.addArtefacts(explained, to: &line) }
        return line.line
    }

    /// Whole seconds as integers (`60`, not `60.0`), else to the millisecond.
    private static func addSeconds(_ key: JSONLine.Key, _ seconds: Double, to line: inout JSONLine) {
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
