public import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// `hrm sessions`: the recordings in the sessions folder, newest first.
public struct SessionsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List recorded sessions, newest first.",
        discussion: """
            The recordings hrm record made in $XDG_DATA_HOME/hrm/sessions/ (by default \
            ~/.local/share/hrm/sessions/): start, duration, strap, average and maximum heart \
            rate, and the file. --json prints a line per session. A file that cannot be read is \
            named on stderr and left out. Exit status: 0; 66 when the folder cannot be read.
            """
    )

    @Flag(help: "Print one JSON object per session.") public var json = false

    public init() {}

    public func run() throws {
        StandardOutput.prepare()
        guard let folder = SessionsFolder.fromEnvironment() else {
            StandardOutput.diagnostic(
                "hrm sessions: neither XDG_DATA_HOME nor HOME is set to an absolute path")
            throw ExitCode(66)
        }
        guard let directory = opendir(folder.path) else {
            if errno == ENOENT { return }  // nothing recorded yet
            StandardOutput.diagnostic("hrm sessions: cannot read \(folder.path): \(Errno.text(errno))")
            throw ExitCode(66)
        }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".jsonl") { names.append(name) }
        }
        closedir(directory)
        let output = LineWriter()
        // Named by the start time: newest first is the names in reverse.
        for name in names.sorted(by: >) {
            let path = folder.path + "/" + name
            guard let text = try? RRInput.contents(of: path),
                let session = try? RecordedSession(text: text, source: name)
            else {
                StandardOutput.diagnostic("hrm sessions: \(name) is not a readable recording: left out")
                continue
            }
            output.line(json ? Self.jsonLine(session, path: path) : Self.textLine(session, path: path))
        }
        output.flush()
    }

    static func jsonLine(_ session: RecordedSession, path: String) -> String {
        let (average, maximum) = SessionExport.heartRates(session)
        var line = JSONLine(type: "session")
        line.add("start", Timestamp(millisecondsSinceEpoch: session.start).description)
        line.add("duration_s", Double(max(session.end - session.start, 0)) / 1000)
        line.add("device", session.device)
        line.add("name", session.name)
        line.add("measurements", session.measurements.count)
        line.add("avg_bpm", average)
        line.add("max_bpm", maximum)
        line.add("path", path)
        return line.line
    }

    /// `2026-11-23 16:20  0:11  D2:4B:7E:10:20:32 Flaky Strap  avg 74 max 78 bpm  /path`
    static func textLine(_ session: RecordedSession, path: String) -> String {
        let (average, maximum) = SessionExport.heartRates(session)
        let start = Timestamp(millisecondsSinceEpoch: session.start).description
        let when = start.prefix(10) + " " + start.dropFirst(11).prefix(5) + " UTC"
        let duration = SessionReport.clock(Double(max(session.end - session.start, 0)) / 1000)
        let strap = [
            session.device, session.name.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) },
        ]
        .compactMap { $0 }.joined(separator: " ")
        let rates = average.map { "avg \($0) max \(maximum ?? $0) bpm" } ?? "no heart rate"
        return "\(when)  \(duration)  \(strap.isEmpty ? "(no strap)" : strap)  \(rates)  \(path)"
    }
}
