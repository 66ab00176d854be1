public import ArgumentParser
import InputFiles
public import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#endif

/// `hrm sessions`: the recordings in the sessions folder, newest first, from the session
/// library's index.
public struct SessionsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List recorded sessions, newest first.",
        discussion: """
            The recordings hrm record made in $XDG_DATA_HOME/hrm/sessions/ (by default \
            ~/.local/share/hrm/sessions/): start, duration, strap, average and maximum heart \
            rate, and the file. A recording of several straps is shown by its first strap (the \
            first it names: its name and heart rate) and +N for the others. --json prints a line \
            per session, with every strap's address in "devices"; --csv a header and a row per \
            session, with the first strap's figures of the library (minimum heart rate, RMSSD, \
            SDNN, alpha1, resting heart rate: the lowest mean over 5 minutes). A file that cannot \
            be read is named on stderr and left out (anything but a regular file, too: a FIFO, a \
            device, a folder); one that ends in NUL bytes (a crash) is listed with a warning; one \
            of a newer hrm's format is listed with a note, unread. With no recordings yet, stderr \
            says so and where it looked. hrm export takes a session by its place here: latest or \
            -1 for the newest, -2 for the one before, or by its file name.

            The list comes from the session library's index, $XDG_DATA_HOME/hrm/library.sqlite3 \
            (SQLite): each run looks at the folder's files (their size and time, without reading \
            them) and reads only those that are new or changed; hrm record adds its session when \
            it ends. The first run reads every file and says so on stderr. An index that is \
            missing, damaged or of an older hrm is made again from the recordings (said on \
            stderr); one that cannot be written, or is busy past 5 s, is left as it is and the \
            recordings are read instead. The recordings are never changed. --reindex makes the \
            index again from every file.

            --since and --until take a date (2026-01-01, UTC, --until's whole day included), a \
            time (2026-01-01T06:00:00Z) or a time ago (30d, 12h, 2w); --device an address or a \
            part of a strap's name (any strap of the session); --min-duration a time (20m).

            Exit status: 0; 64 for usage errors; 66 when the folder cannot be read.
            """
    )

    @Flag(help: "Print one JSON object per session.") public var json = false

    @Flag(help: "Print CSV: a header, then a row per session.") public var csv = false

    @Option(
        help: ArgumentHelp(
            "Only sessions that started at or after this: a date (2026-01-01), a time, or a time ago (30d, 12h).",
            valueName: "when"))
    public var since: String?

    @Option(
        help: ArgumentHelp(
            "Only sessions that started before the end of this day (2026-01-31), this time, or this time ago.",
            valueName: "when"))
    public var until: String?

    @Option(
        help: ArgumentHelp(
            "Only sessions of this strap: its address, or a part of its name.", valueName: "address"))
    public var device: String?

    @Option(
        name: .customLong("min-duration"), parsing: .unconditional,
        help: ArgumentHelp(
            "Only sessions at least this long: seconds, or with a unit (20m, 1h).", valueName: "time"),
        transform: Seconds.parsing)
    public var minDuration: Seconds?

    @Flag(help: "Make the session library's index again from every recording.") public var reindex = false

    public init() {}

    public func validate() throws {
        if json, csv { throw ValidationError("--json and --csv cannot be used together") }
        _ = try bounds(now: 0)
    }

    public func run() throws {
        StandardOutput.prepare()
        let (from, to) = try bounds(now: Timestamp.now().millisecondsSinceEpoch)
        let (folder, found) = try Self.libraryEntries(command: "hrm sessions", reindex: reindex)
        guard let entries = found, !entries.isEmpty else {
            // On stderr: stdout stays empty for a script, which reads no sessions there.
            StandardOutput.diagnostic(
                "hrm sessions: no recordings in \(folder.path) yet (hrm record makes them)")
            return
        }
        let output = LineWriter()
        if csv { output.line(SessionsCSV.header) }
        for entry in entries {
            let path = folder.path + "/" + entry.name
            switch entry.kind {
            case .unreadable(let message), .unopenable(let message):
                StandardOutput.diagnostic("hrm sessions: \(message): left out")
            case .newerFormat(let format, let start):
                guard device == nil, minDuration == nil, Self.within(start, from: from, to: to) else {
                    continue
                }
                output.line(
                    Self.newerFormatLine(format: format, start: start, path: path, json: json, csv: csv))
            case .session(let summary, let warning):
                guard Self.within(summary.start, from: from, to: to), chosen(summary),
                    minDuration.map({ summary.durationSeconds >= $0.value }) ?? true
                else { continue }
                if let warning { StandardOutput.diagnostic("hrm sessions: warning: \(warning)") }
                output.line(
                    json
                        ? Self.jsonLine(summary, path: path)
                        : csv ? SessionsCSV.row(summary, path: path) : Self.textLine(summary, path: path))
            }
        }
        output.flush()
    }

    /// The sessions folder and its entries, newest first, from the index brought up to date
    /// (`hrm sessions` and `hrm trends` alike): what the listing says goes to stderr under
    /// `command`'s name, with a progress line on a terminal. Exit 66 when the folder cannot be
    /// found or listed; nil entries when it does not exist yet.
    static func libraryEntries(command: String, reindex: Bool) throws -> (SessionsFolder, [LibraryEntry]?) {
        guard let folder = SessionsFolder.fromEnvironment() else {
            StandardOutput.diagnostic("\(command): neither XDG_DATA_HOME nor HOME is set to an absolute path")
            throw ExitCode(66)
        }
        let progress = ProgressLine(command: command)
        let reporter = SessionLibraryIndex.Reporter(
            say: { line in
                progress.clear()
                StandardOutput.diagnostic("\(command): \(line)")
            }, progress: progress.enabled ? progress.show : nil)
        let found: [LibraryEntry]?
        do throws(SessionsFolder.Unreadable) {
            found = try SessionLibraryIndex.entries(of: folder, reindex: reindex, reporter: reporter)
        } catch {
            progress.clear()
            StandardOutput.diagnostic("\(command): \(error)")
            throw ExitCode(66)
        }
        progress.clear()
        return (folder, found)
    }

    /// `--since` and `--until` as milliseconds since the epoch (a half-open range); throws the
    /// usage error for a value that is neither a date, a time nor a time ago.
    func bounds(now: Int64) throws(ValidationError) -> (from: Int64?, to: Int64?) {
        let from = try since.map { (text) throws(ValidationError) in
            try SessionsWhen.instant(text, now: now, endOfDay: false, option: "--since")
        }
        let to = try until.map { (text) throws(ValidationError) in
            try SessionsWhen.instant(text, now: now, endOfDay: true, option: "--until")
        }
        return (from, to)
    }

    static func within(_ start: Int64?, from: Int64?, to: Int64?) -> Bool {
        guard from != nil || to != nil else { return true }
        guard let start else { return false }
        if let from, start < from { return false }
        if let to, start >= to { return false }
        return true
    }

    /// Whether `--device` (if given) names a strap of the session, as watch's DEVICE arguments do.
    private func chosen(_ summary: RecordingSummary) -> Bool {
        guard let device else { return true }
        let straps = summary.straps.map { StrapChoice.Strap(device: $0.address, name: $0.name) }
        switch StrapChoice.pick(device, among: straps) {
        case .found, .several: return true
        case .none: return false
        }
    }

    static func jsonLine(_ summary: RecordingSummary, path: String) -> String {
        var line = JSONLine(type: "session")
        line.add("start", Timestamp(millisecondsSinceEpoch: summary.start).description)
        line.add("duration_s", summary.durationSeconds)
        line.add("device", summary.device)
        line.add("name", summary.name)
        line.add("devices", summary.devices)
        line.add("measurements", summary.measurements)
        line.add("avg_bpm", summary.averageBPM)
        line.add("max_bpm", summary.maximumBPM)
        line.add("path", path)
        return line.line
    }

    /// `2026-11-23 16:20  0:11  D2:4B:7E:10:20:32 Flaky Strap  avg 74 max 78 bpm  /path`; of
    /// several straps, the first and `+1` (`+2`, ...) for the others.
    static func textLine(_ summary: RecordingSummary, path: String) -> String {
        let when = when(summary.start)
        let duration = SessionReport.clock(summary.durationSeconds)
        let strap = [
            summary.device.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) },
            summary.name.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) },
            summary.devices.count > 1 ? "+\(summary.devices.count - 1)" : nil,
        ]
        .compactMap { $0 }.joined(separator: " ")
        let rates =
            summary.averageBPM.map { "avg \($0) max \(summary.maximumBPM ?? $0) bpm" } ?? "no heart rate"
        // A file's name in the folder is anyone's choice: escaped like any text from outside
        // (the exact path is in --json).
        let shownPath = TerminalText.sanitised(path, limit: 4096)
        return "\(when)  \(duration)  \(strap.isEmpty ? "(no strap)" : strap)  \(rates)  \(shownPath)"
    }

    /// A recording of a newer hrm's format: listed, not read.
    static func newerFormatLine(format: Int, start: Int64?, path: String, json: Bool, csv: Bool) -> String {
        let note = "recorded by a newer hrm (format \(format)): not read; a newer hrm reads it"
        if json {
            var line = JSONLine(type: "session")
            line.add("start", start.map { Timestamp(millisecondsSinceEpoch: $0).description })
            line.add("format", format)
            line.add("note", note)
            line.add("path", path)
            return line.line
        }
        if csv { return SessionsCSV.newerFormatRow(format: format, start: start, path: path) }
        let shownPath = TerminalText.sanitised(path, limit: 4096)
        return "\(start.map(when) ?? "????-??-?? ??:?? UTC")  ?:??  (\(note))  \(shownPath)"
    }

    /// `2026-11-23 16:20 UTC`.
    static func when(_ start: Int64) -> String {
        let text = Timestamp(millisecondsSinceEpoch: start).description
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }
}

/// The progress line of a listing that reads many files: on stderr when it is a terminal,
/// written over itself, taken off before any other line and at the end.
final class ProgressLine {
    let enabled = isatty(STDERR_FILENO) == 1
    /// `hrm sessions`: the line's first words.
    private let command: String
    private var shown = false
    private var lastPercent = -1

    init(command: String) { self.command = command }

    func show(_ read: Int, _ of: Int) {
        let percent = of > 0 ? read * 100 / of : 100
        guard percent != lastPercent else { return }
        lastPercent = percent
        shown = true
        write("\r\u{1B}[K\(command): indexing \(read)/\(of) (\(percent) %)")
    }

    func clear() {
        guard shown else { return }
        shown = false
        lastPercent = -1
        write("\r\u{1B}[K")
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = StandardOutput.writeAll(STDERR_FILENO, $0) }
    }
}
