public import ArgumentParser
import EDF
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
        abstract: "Turn a recorded session into FIT, TCX, CSV, JSON lines or EDF+.",
        // SESSION is parsed as every unknown word (for `-1`); the usage shows what is meant.
        usage:
            "hrm export <session> [--format <format>] [-o <file>] [--force] [--sport <sport>] [--device <address>]",
        discussion: """
            SESSION is a recording (hrm record, hrm watch --record): a path, latest (or -1) for \
            the newest of hrm sessions, -2 for the one before, and so on, or a file name in the \
            sessions folder. The format is --format, else -o FILE's extension (.fit, .tcx, .csv, \
            .json, .jsonl or .edf). fit is the activity file \
            Garmin Connect, Strava and intervals.icu import: a record per second of connected \
            time with the heart rate, every RR interval in hrv messages, timer stops at drops, a \
            lap, the session and the activity. tcx is a TrainingCenterDatabase v2 activity with a \
            trackpoint per second. csv and json are what hrm watch --csv and --json printed. \
            Times are UTC; a drop is a gap, never invented samples.

            A recording of a Polar H10's ECG (record --ecg, --acc) also exports its raw \
            streams. edf writes EDF+C files, one per connected stretch with ECG: FILE, then \
            FILE-2, FILE-3, ... (the number before the extension: run.edf, run-2.edf); an ECG \
            channel in uV at the recorded rate (130 Hz), ACC X, ACC Y and ACC Z in mG when the \
            stretch has acceleration, one-second data records, the start in UTC from the \
            sensor's clock, and annotations: R at each R peak (the recording's ecg_beat lines, \
            or without any, the peaks hrm's detector finds in the ECG), "strap disconnected", \
            and "ECG samples lost" / "ACC samples lost" with their duration where frames never \
            came (filled with the last value before them; a loss over 5 s starts a new file). \
            edf needs -o FILE. csv with -o FILE also writes FILE-ecg.csv (sensor_ns,time,uv) \
            and FILE-acc.csv (sensor_ns,time,x_mg,y_mg,z_mg), FILE less its .csv: a row per \
            sample received, times to the microsecond.

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

            Exit status: 0, 64 when fit or tcx is asked of several straps without --device (edf \
            and csv's ECG of several straps with ECG), or --device names none (the straps are \
            listed), 65 when SESSION is not a recording (an empty file neither), or edf is asked \
            of one without ECG, 66 when it cannot be read or is not a regular file (or \
            latest, -N find no such recording), 73 \
            when FILE cannot be created (it is SESSION, it exists, a link, a folder, no \
            permission), 74 when writing it fails (a full disk).
            """
    )

    public enum Format: String, ArgumentChoice, Sendable {
        case fit, tcx, csv, json, edf
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

    @Option(help: "fit, tcx, csv, json or edf (default: -o FILE's extension).") public var format: Format?

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
                    "cannot tell the format from \(output): give --format fit, tcx, csv, json or edf, or a file ending in .fit, .tcx, .csv, .json or .edf"
                )
            }
            throw ValidationError(
                "give --format fit, tcx, csv, json or edf (or -o FILE with one of those extensions)")
        }
        if format == .edf, output == nil {
            throw ValidationError("EDF+ is written as a file per connected stretch: give -o FILE")
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
            recorded = try RecordedSession(
                text: text, source: source, keepingLines: format == .json,
                readingStreams: readsStreams(format))
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(65)
        }
        for warning in recorded.warnings { StandardOutput.diagnostic("hrm export: warning: \(warning)") }
        if format == .edf {
            let strap = try ecgStrap(of: recorded, source: source)
            return try writeEDF(
                recorded, strap: strap, source: source, first: destination, input: input.identity)
        }
        if let strap = try chosenStrap(of: recorded, source: source, format: format) {
            do {
                recorded = try RecordedSession(
                    text: text, source: source, only: strap.device, keepingLines: format == .json,
                    readingStreams: readsStreams(format))
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
            case .edf: []  // written above
            }
        // The ECG and ACC files beside the CSV: checked (and refused) before anything is written.
        var companions: [(ExportDestination, String)] = []
        // Not beside a device (-o /dev/null): nothing to put them beside.
        if format == .csv, recorded.streams.frameCount > 0, destination?.existing != .device {
            companions = try streamCSVs(recorded, source: source, input: input.identity)
        }
        try write(bytes, to: destination)
        for (companion, text) in companions { try write(Array(text.utf8), to: companion) }
    }

    /// Only the EDF+ and CSV exports read the PMD streams' lines.
    private func readsStreams(_ format: Format) -> Bool { format == .edf || format == .csv }

    /// The strap whose ECG `edf` exports: `--device`'s, else the one strap with ECG. Exit 65
    /// without ECG, 64 for several straps with ECG and no `--device`.
    private func ecgStrap(of recorded: RecordedSession, source: String) throws -> String {
        let withECG = recorded.streams.devices(sending: .ecg)
        if let device {
            let outcome = StrapChoice.pick(device, among: recorded.straps)
            guard case .found(let strap) = outcome else {
                StandardOutput.diagnostic(
                    "hrm export: " + StrapChoice.refusal(device, outcome, among: recorded.straps, in: source))
                throw ExitCode(64)
            }
            guard withECG.contains(strap.device) else {
                StandardOutput.diagnostic(
                    "hrm export: \(source) has no ECG of \(StrapChoice.label(strap)) (no pmd frames of ECG: record a Polar H10 with --ecg)"
                )
                throw ExitCode(65)  // EX_DATAERR
            }
            return strap.device
        }
        guard let only = withECG.first else {
            StandardOutput.diagnostic(
                "hrm export: \(source) has no ECG to export as EDF+ (no pmd frames of ECG: record a Polar H10 with --ecg)"
            )
            throw ExitCode(65)  // EX_DATAERR
        }
        guard withECG.count == 1 else {
            let straps = recorded.straps.filter { withECG.contains($0.device) }
            StandardOutput.diagnostic(
                "hrm export: \(source) holds the ECG of \(withECG.count) straps, and an EDF+ file takes one: give --device ADDRESS (or a part of the name):"
                    + StrapChoice.list(straps))
            throw ExitCode(64)  // EX_USAGE
        }
        return only
    }

    /// `--format edf`: a file per connected stretch with ECG, FILE then FILE-2, ...; every name
    /// checked before the first is written.
    private func writeEDF(
        _ recorded: RecordedSession, strap: String, source: String, first: ExportDestination?,
        input: FileIdentity?
    ) throws {
        let decoded = SensorStretches.decode(recorded.streams, device: strap)
        Self.warnUnreadable(decoded)
        var beats: [RecordedStreams.Beat] = []
        for case .beat(let beat) in recorded.streams.items where beat.device == nil || beat.device == strap {
            beats.append(beat)
        }
        let name = recorded.straps.first { $0.device == strap }?.name
        let edf = StreamExport.edf(decoded, beats: beats, equipment: name ?? strap)
        for warning in edf.warnings { StandardOutput.diagnostic("hrm export: warning: \(warning)") }
        guard !edf.files.isEmpty, let output, let first else {
            StandardOutput.diagnostic("hrm export: \(source) has pmd frames but no ECG sample that decodes")
            throw ExitCode(65)
        }
        var destinations = [first]
        do {
            for index in 1..<edf.files.count {
                destinations.append(
                    try ExportDestination(Self.numbered(output, index + 1), force: force, input: input))
            }
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(error.status)
        }
        var contents: [[UInt8]] = []
        for file in edf.files {
            do {
                contents.append(try EDFWriter.bytes(file))
            } catch {
                StandardOutput.diagnostic("hrm export: cannot write EDF+: \(error)")
                throw ExitCode(65)
            }
        }
        for (bytes, destination) in zip(contents, destinations) { try write(bytes, to: destination) }
    }

    /// The ECG and ACC CSVs of the recording's streams, with where each goes; none without -o
    /// FILE (a note says so). Exit 64 for the streams of several straps without `--device`.
    private func streamCSVs(_ recorded: RecordedSession, source: String, input: FileIdentity?) throws
        -> [(ExportDestination, String)]
    {
        guard let output else {
            StandardOutput.diagnostic(
                "hrm export: note: \(source) holds ECG or acceleration; -o FILE writes them beside it (FILE-ecg.csv, FILE-acc.csv)"
            )
            return []
        }
        var devices = recorded.streams.devices(sending: .ecg)
        for device in recorded.streams.devices(sending: .acc) where !devices.contains(device) {
            devices.append(device)
        }
        if devices.count > 1 {
            let straps = recorded.straps.filter { devices.contains($0.device) }
            StandardOutput.diagnostic(
                "hrm export: \(source) holds the ECG or acceleration of \(devices.count) straps, and FILE-ecg.csv and FILE-acc.csv take one's: give --device ADDRESS (or a part of the name):"
                    + StrapChoice.list(straps))
            throw ExitCode(64)
        }
        let decoded = SensorStretches.decode(recorded.streams, device: devices.first)
        Self.warnUnreadable(decoded)
        var files: [(ExportDestination, String)] = []
        do {
            if let text = StreamExport.ecgCSV(decoded) {
                files.append(
                    (try ExportDestination(Self.companion(output, "ecg"), force: force, input: input), text))
            }
            if let text = StreamExport.accCSV(decoded) {
                files.append(
                    (try ExportDestination(Self.companion(output, "acc"), force: force, input: input), text))
            }
        } catch {
            StandardOutput.diagnostic("hrm export: \(error)")
            throw ExitCode(error.status)
        }
        return files
    }

    /// Frames that did not decode: a warning, the first reason given.
    private static func warnUnreadable(_ decoded: SensorStretches.Decoded) {
        guard let first = decoded.unreadable.first else { return }
        let count = decoded.unreadable.count
        StandardOutput.diagnostic(
            "hrm export: warning: \(count) pmd frame\(count == 1 ? "" : "s") that do\(count == 1 ? "es" : "") not decode left out (\(TerminalText.sanitised(first, limit: TerminalText.messageLimit)))"
        )
    }

    /// `run.edf` as the `number`th file: `run-2.edf` (the number before the extension, or at the
    /// end of a name without one).
    static func numbered(_ path: String, _ number: Int) -> String {
        let (stem, suffix) = split(path)
        return "\(stem)-\(number)\(suffix)"
    }

    /// `run.csv` → `run-ecg.csv`: the name less its extension, `-KIND.csv`.
    static func companion(_ path: String, _ kind: String) -> String {
        "\(split(path).stem)-\(kind).csv"
    }

    /// A path's stem and extension (with its dot; empty when the last name has none, or is a
    /// dot file's whole name).
    private static func split(_ path: String) -> (stem: Substring, suffix: Substring) {
        let name = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[name...].lastIndex(of: "."), dot > name else { return (path[...], "") }
        return (path[..<dot], path[dot...])
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
