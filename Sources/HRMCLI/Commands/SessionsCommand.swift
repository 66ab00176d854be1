public import ArgumentParser
import InputFiles
import Monitor
import Outputs
import SessionLibrary

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
            rate, and the file. A recording of several straps is shown by its first strap (the \
            first it names: its name and heart rate) and +N for the others. --json prints a line \
            per session, with every strap's address in "devices". A file that cannot be read is \
            named on stderr and left out (anything but a regular file, too: a FIFO, a device, a \
            folder); one that ends in NUL bytes (a crash) is listed with a warning. With no \
            recordings yet, stderr says so and where it looked. hrm export takes a session by \
            its place here: latest or -1 for the newest, -2 for the one before, or by its file \
            name. Exit status: 0; 66 when the folder cannot be read.
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
        let names: [String]
        do throws(SessionsFolder.Unreadable) {
            names = try folder.recordings() ?? []
        } catch {
            StandardOutput.diagnostic("hrm sessions: \(error)")
            throw ExitCode(66)
        }
        if names.isEmpty {
            // On stderr: stdout stays empty for a script, which reads no sessions there.
            StandardOutput.diagnostic(
                "hrm sessions: no recordings in \(folder.path) yet (hrm record makes them)")
            return
        }
        let output = LineWriter()
        for name in names {
            let path = folder.path + "/" + name
            let shown = TerminalText.sanitised(name, limit: TerminalText.messageLimit)
            guard let session = Self.read(path, name: shown) else { continue }
            output.line(json ? Self.jsonLine(session, path: path) : Self.textLine(session, path: path))
        }
        output.flush()
    }

    /// The recording at `path`, or nil (said on stderr) when it cannot be read: anything but a
    /// regular file (a FIFO would block, a link to /dev/zero never end), a line over 64 KiB, or
    /// not a recording. A torn end of NUL bytes is a warning; the session is listed.
    private static func read(_ path: String, name: String) -> RecordedSession? {
        do {
            let input = try TextInput.file(path, source: name)
            let session = try RecordedSession(text: input.text, source: name)
            if let warning = input.tornTailWarning {
                StandardOutput.diagnostic("hrm sessions: warning: \(warning)")
            }
            return session
        } catch {
            // The message names the file: "cannot read x.jsonl: not a regular file (a FIFO)".
            StandardOutput.diagnostic("hrm sessions: \(error): left out")
            return nil
        }
    }

    /// What a line says of a session: its first strap's figures (all of it when it names one strap
    /// or none), and how many straps it has.
    struct Described {
        let device: String?
        let name: String?
        let measurements: [RecordedSession.Measurement]
        let straps: [StrapChoice.Strap]

        init(_ session: RecordedSession) {
            straps = session.straps
            if straps.count > 1 {
                // The interleaved heart rates of several straps average to nobody's.
                let first = straps[0]
                device = first.device
                name = first.name
                measurements = session.measurements.filter { $0.device == first.device }
            } else {
                device = session.device
                name = session.name
                measurements = session.measurements
            }
        }
    }

    static func jsonLine(_ session: RecordedSession, path: String) -> String {
        let described = Described(session)
        let (average, maximum) = SessionExport.heartRates(of: described.measurements)
        var line = JSONLine(type: "session")
        line.add("start", Timestamp(millisecondsSinceEpoch: session.start).description)
        line.add("duration_s", Double(max(session.end - session.start, 0)) / 1000)
        line.add("device", described.device)
        line.add("name", described.name)
        line.add("devices", described.straps.map(\.device))
        line.add("measurements", described.measurements.count)
        line.add("avg_bpm", average)
        line.add("max_bpm", maximum)
        line.add("path", path)
        return line.line
    }

    /// `2026-11-23 16:20  0:11  D2:4B:7E:10:20:32 Flaky Strap  avg 74 max 78 bpm  /path`; of
    /// several straps, the first and `+1` (`+2`, ...) for the others.
    static func textLine(_ session: RecordedSession, path: String) -> String {
        let described = Described(session)
        let (average, maximum) = SessionExport.heartRates(of: described.measurements)
        let start = Timestamp(millisecondsSinceEpoch: session.start).description
        let when = start.prefix(10) + " " + start.dropFirst(11).prefix(5) + " UTC"
        let duration = SessionReport.clock(Double(max(session.end - session.start, 0)) / 1000)
        let strap = [
            described.device.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) },
            described.name.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) },
            described.straps.count > 1 ? "+\(described.straps.count - 1)" : nil,
        ]
        .compactMap { $0 }.joined(separator: " ")
        let rates = average.map { "avg \($0) max \(maximum ?? $0) bpm" } ?? "no heart rate"
        // A file's name in the folder is anyone's choice: escaped like any text from outside
        // (the exact path is in --json).
        let shownPath = TerminalText.sanitised(path, limit: 4096)
        return "\(when)  \(duration)  \(strap.isEmpty ? "(no strap)" : strap)  \(rates)  \(shownPath)"
    }
}
