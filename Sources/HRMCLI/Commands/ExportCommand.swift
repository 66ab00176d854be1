public import ArgumentParser
import FIT

#if canImport(Glibc)
    import Glibc
#endif

/// `hrm export SESSION`: a recording as FIT, TCX, CSV or JSON lines.
public struct ExportCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Turn a recorded session into FIT, TCX, CSV or JSON lines.",
        discussion: """
            SESSION is a recording (hrm record, hrm watch --record). fit is the activity file \
            Garmin Connect, Strava and intervals.icu import: a record per second of connected \
            time with the heart rate, every RR interval in hrv messages, timer stops at drops, a \
            lap, the session and the activity. tcx is a TrainingCenterDatabase v2 activity with a \
            trackpoint per second. csv and json are what hrm watch --csv and --json printed. \
            Times are UTC; a drop is a gap, never invented samples.

            Exit status: 0, 65 when SESSION is not a recording, 66 when it cannot be read, 73 \
            when FILE cannot be written.
            """
    )

    public enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        case fit, tcx, csv, json
    }

    @Argument(help: "The recording.") public var session: String

    @Option(help: "fit, tcx, csv or json.") public var format: Format

    @Option(name: [.short, .customLong("output")], help: "Write to this file (default: standard output).")
    public var output: String?

    @Option(help: "The sport: generic, running, cycling, training, walking, ... (FIT's names).")
    public var sport: String = "generic"

    public init() {}

    public func validate() throws {
        if FITActivity.Sport(name: sport) == nil {
            let names = FITActivity.Sport.allCases.map(\.name).joined(separator: ", ")
            throw ValidationError("--sport must be one of: \(names)")
        }
        if format == .fit, output == nil, isatty(STDOUT_FILENO) == 1 {
            throw ValidationError("FIT is binary: give -o FILE, or send standard output to a file")
        }
    }

    public func run() throws {
        StandardOutput.prepare()
        let text: String
        do {
            text = try RRInput.contents(of: session)
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(66)
        }
        let recorded: RecordedSession
        do {
            recorded = try RecordedSession(text: text, source: RRInput.name(of: session))
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(65)
        }
        for warning in recorded.warnings { StandardOutput.diagnostic("hrm export: warning: \(warning)") }
        let sport = FITActivity.Sport(name: sport) ?? .generic
        let bytes: [UInt8] =
            switch format {
            case .fit: SessionExport.fit(recorded, sport: sport)
            case .tcx: Array(SessionExport.tcx(recorded, sport: sport).utf8)
            case .csv: Array(SessionExport.csv(recorded).map { $0 + "\n" }.joined().utf8)
            case .json: Array(SessionExport.json(recorded).map { $0 + "\n" }.joined().utf8)
            }
        try write(bytes)
    }

    private func write(_ bytes: [UInt8]) throws {
        let descriptor =
            output.map { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) } ?? STDOUT_FILENO
        guard descriptor >= 0 else {
            StandardOutput.diagnostic("hrm export: cannot write \(output ?? "-"): \(Errno.text(errno))")
            throw ExitCode(73)
        }
        defer { if descriptor != STDOUT_FILENO { close(descriptor) } }
        let code = bytes.withUnsafeBufferPointer { StandardOutput.writeAll(descriptor, $0) }
        guard code == 0 else {
            StandardOutput.diagnostic(
                "hrm export: cannot write \(output ?? "standard output"): \(Errno.text(code))")
            throw ExitCode(74)
        }
    }
}
