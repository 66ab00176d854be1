public import ArgumentParser
import FIT
import InputFiles
import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#endif

/// `hrm export SESSION`: a recording as FIT, TCX, CSV or JSON lines.
public struct ExportCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Turn a recorded session into FIT, TCX, CSV or JSON lines.",
        // SESSION is parsed as every unknown word (for `-1`); the usage shows what is meant.
        usage:
            "hrm export <session> [--format <format>] [-o <file>] [--force] [--sport <sport>] [--device <address>]",
        discussion: """
            SESSION is a recording (hrm record, hrm watch --record): a path, latest (or -1) for \
            the newest of hrm sessions, -2 for the one before, and so on, or a file name in the \
            sessions folder. The format is --format, else -o FILE's extension (.fit, .tcx, .csv, \
            .json or .jsonl). fit is the activity file \
            Garmin Connect, Strava and intervals.icu import: a record per second of connected \
            time with the heart rate, every RR interval in hrv messages, timer stops at drops, a \
            lap, the session and the activity. tcx is a TrainingCenterDatabase v2 activity with a \
            trackpoint per second. csv and json are what hrm watch --csv and --json printed. \
            Times are UTC; a drop is a gap, never invented samples.

            A recording of several straps (watch --all, watch DEV1 DEV2) is one activity per \
            strap: fit and tcx need --device ADDRESS (or a part of the strap's name) to pick one; \
            csv and json keep every strap (each row and line names its device) unless --device \
            narrows them.

            -o FILE is never SESSION itself (the same file by any name), nor an existing file \
            unless --force; a symbolic link there is replaced, never followed (with --force). \
            The export goes to a temporary file beside FILE, saved to disk, then renamed to \
            FILE: a full disk leaves what was there as it was. SESSION must be a regular file \
            (a FIFO or a device is refused); a line of it longer than 64 KiB is an error, and \
            NUL bytes at its end (a crash) are left out with a warning.

            Exit status: 0, 64 when fit or tcx is asked of several straps without --device, or \
            --device names none (the straps are listed), 65 when SESSION is not a recording \
            (an empty file neither), 66 when it cannot be read or is not a regular file (or \
            latest, -N find no such recording), 73 \
            when FILE cannot be created (it is SESSION, it exists, a link, a folder, no \
            permission), 74 when writing it fails (a full disk).
            """
    )

    public enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        case fit, tcx, csv, json
    }

    // Every word ArgumentParser does not know lands here, so that `-1` is a session rather than
    // an unknown option (ArgumentParser takes any dash word for an option); validate() takes one,
    // and refuses the other dash words as the unknown options they are.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "The recording: a path, latest, -1, -2, ... (as hrm sessions lists them), or a file name there.",
            valueName: "session"))
    public var words: [String] = []

    /// SESSION as given.
    public var session: String { words.first ?? "" }

    @Option(help: "fit, tcx, csv or json (default: -o FILE's extension).") public var format: Format?

    @Option(name: [.short, .customLong("output")], help: "Write to this file (default: standard output).")
    public var output: String?

    @Flag(help: "Replace FILE if it exists (a symbolic link is replaced, never followed).")
    public var force = false

    @Option(help: "The sport: generic, running, cycling, training, walking, ... (FIT's names).")
    public var sport: String = "generic"

    @Option(
        help: ArgumentHelp(
            "The strap of a recording of several: its address, or a part of its name.", valueName: "address"))
    public var device: String?

    public init() {}

    public func validate() throws {
        guard let first = words.first else { throw ValidationError("Missing expected argument '<session>'") }
        if first.hasPrefix("-"), first != "-", Int(first.dropFirst()) == nil {
            throw ValidationError("Unknown option '\(first)'")
        }
        if words.count > 1 {
            let extra = words[1]
            throw ValidationError(
                extra.hasPrefix("-")
                    ? "Unknown option '\(extra)'" : "Unexpected argument '\(extra)': give one SESSION")
        }
        if FITActivity.Sport(name: sport) == nil {
            let names = FITActivity.Sport.allCases.map(\.name).joined(separator: ", ")
            throw ValidationError("--sport must be one of: \(names)")
        }
        guard let format = chosenFormat else {
            if let output {
                throw ValidationError(
                    "cannot tell the format from \(output): give --format fit, tcx, csv or json, or a file ending in .fit, .tcx, .csv or .json"
                )
            }
            throw ValidationError(
                "give --format fit, tcx, csv or json (or -o FILE with one of those extensions)")
        }
        if format == .fit, output == nil, isatty(STDOUT_FILENO) == 1 {
            throw ValidationError("FIT is binary: give -o FILE, or send standard output to a file")
        }
    }

    /// `--format`, else the one `-o FILE`'s extension names.
    var chosenFormat: Format? {
        if let format { return format }
        guard let output, let dot = output.lastIndex(of: "."), !output[dot...].contains("/") else {
            return nil
        }
        let suffix = output[output.index(after: dot)...].lowercased()
        return suffix == "jsonl" ? .json : Format(rawValue: suffix)
    }

    public func run() throws {
        StandardOutput.prepare()
        guard let format = chosenFormat else { throw ExitCode(64) }  // validate() said why
        let path: String
        switch SessionReference.resolve(session, in: SessionsFolder.fromEnvironment()) {
        case .success(let found): path = found
        case .failure(let failure):
            StandardOutput.diagnostic("hrm export: \(failure)")
            throw ExitCode(66)  // EX_NOINPUT
        }
        let input = try RRInput.contents(of: path, for: "export")
        let text = input.text
        let source = input.source
        // Refused before any work: the input itself, an existing file without --force, a link.
        let destination: ExportDestination?
        do {
            destination = try output.map { (path) throws(ExportDestination.Failure) in
                try ExportDestination(path, force: force, input: input.identity)
            }
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(error.status)
        }
        var recorded: RecordedSession
        do {
            // The lines as written only for --format json: the other formats are made of the values.
            recorded = try RecordedSession(text: text, source: source, keepingLines: format == .json)
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(65)
        }
        for warning in recorded.warnings { StandardOutput.diagnostic("hrm export: warning: \(warning)") }
        if let strap = try chosenStrap(of: recorded, source: source, format: format) {
            do {
                recorded = try RecordedSession(
                    text: text, source: source, only: strap.device, keepingLines: format == .json)
            } catch {
                StandardOutput.diagnostic("hrm export: \(error)")
                throw ExitCode(65)
            }
        }
        let sport = FITActivity.Sport(name: sport) ?? .generic
        let bytes: [UInt8] =
            switch format {
            case .fit: SessionExport.fit(recorded, sport: sport)
            case .tcx: Array(SessionExport.tcx(recorded, sport: sport).utf8)
            case .csv: Array(SessionExport.csv(recorded).map { $0 + "\n" }.joined().utf8)
            case .json: Array(SessionExport.json(recorded).map { $0 + "\n" }.joined().utf8)
            }
        try write(bytes, to: destination)
    }

    /// The strap to export alone: `--device`'s, nil for the whole recording. FIT and TCX hold one
    /// strap's heart rate, so a recording of several without `--device` is a usage error (64).
    private func chosenStrap(of recorded: RecordedSession, source: String, format: Format) throws
        -> StrapChoice.Strap?
    {
        let straps = recorded.straps
        guard let device else {
            guard straps.count > 1, format == .fit || format == .tcx else { return nil }
            StandardOutput.diagnostic(
                "hrm export: \(source) holds \(straps.count) straps, and a \(format.rawValue.uppercased()) file takes one: give --device ADDRESS (or a part of the name):"
                    + Self.list(straps, of: recorded))
            throw ExitCode(64)  // EX_USAGE
        }
        let outcome = StrapChoice.pick(device, among: straps)
        guard case .found(let strap) = outcome else {
            StandardOutput.diagnostic(
                "hrm export: " + StrapChoice.refusal(device, outcome, among: straps, in: source))
            throw ExitCode(64)
        }
        return strap
    }

    /// A line per strap: `  C0:FF:EE:00:00:01 "HRM-Pro:123456", 10 measurements`.
    private static func list(_ straps: [StrapChoice.Strap], of recorded: RecordedSession) -> String {
        var counts: [String: Int] = [:]
        for measurement in recorded.measurements {
            if let device = measurement.device { counts[device, default: 0] += 1 }
        }
        return StrapChoice.list(straps) { strap in
            let count = counts[strap.device] ?? 0
            return ", \(count) measurement\(count == 1 ? "" : "s")"
        }
    }

    /// To `destination` (see `ExportDestination`), else to standard output.
    private func write(_ bytes: [UInt8], to destination: ExportDestination?) throws {
        guard let destination else {
            let code = bytes.withUnsafeBufferPointer { StandardOutput.writeAll(STDOUT_FILENO, $0) }
            guard code == 0 else {
                StandardOutput.diagnostic("hrm export: cannot write standard output: \(Errno.text(code))")
                throw ExitCode(74)  // EX_IOERR
            }
            return
        }
        do throws(ExportDestination.Failure) {
            try destination.write(bytes)
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(error.status)
        }
    }
}
