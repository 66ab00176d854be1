package import Monitor
import Threads

/// Writes a session's events to a recording, on a task of its own behind a `QueuedSink`: a line
/// per event, whole lines only, each batch the queue hands over in one write(2), `fsync`ed at
/// most every `syncInterval` and at the end. The file's blocking calls (open, write, fsync,
/// close) run on a thread of the sink's own, one hop per batch, never on Swift's pool. A disk
/// that fails (full, gone) ends the recording with an `error` event; watching goes on, and
/// `RecordingOutcome` keeps the failure for the exit status.
package actor RecordingSink: SlowEventSink {
    /// Where the recording goes.
    package enum Target {
        /// A file created before the session starts (`watch --record PATH`).
        case file(RecordingFile)
        /// The sessions folder (`hrm record`): the file is named by the start time and the strap,
        /// once the strap is known; events before that wait in memory (a scan's few statuses).
        case sessions(SessionsFolder)
    }

    package static let syncInterval: Duration = .seconds(5)

    private let start: Timestamp
    private let startInstant: ContinuousInstant
    private let command: String
    private let folder: SessionsFolder?
    private var file: RecordingFile?
    private var waiting: [MonitorEvent] = []
    private var lastSync: ContinuousInstant
    private var failed = false
    private var lines = 0
    /// Lines of the batch being written: one write(2) for the batch, whole lines only.
    private var buffer = ""
    private var pendingLines = 0
    private var headerWritten = false
    /// Sends an `error` event into the session (from this task, never under the pipeline's lock).
    private let report: @Sendable (MonitorEvent) -> Void
    /// Told when the recording fails, for the run's exit status.
    private let outcome: RecordingOutcome
    /// Where the file's blocking calls run.
    private let disk = WorkerThread(named: "hrm-record")
    /// Where the recording says where it goes, and what it kept.
    private let console: any SessionConsole

    package init(
        _ target: sending Target, start: Timestamp, startInstant: ContinuousInstant, command: String,
        outcome: RecordingOutcome = RecordingOutcome(), console: any SessionConsole = SilentConsole(),
        report: @escaping @Sendable (MonitorEvent) -> Void
    ) {
        self.console = console
        self.start = start
        self.startInstant = startInstant
        self.command = command
        self.outcome = outcome
        self.report = report
        lastSync = startInstant
        switch target {
        case .file(let file):
            self.file = file
            folder = nil
        case .sessions(let folder):
            self.folder = folder
        }
    }

    package func write(_ event: MonitorEvent) async throws {
        guard !failed else { return }
        var opened = file
        if opened == nil { opened = await openInFolder(for: event) }
        guard let file = opened else {
            waiting.append(event)
            return
        }
        catchUp(file)
        write(RecordingLine.line(event, since: startInstant), to: file)
    }

    package func close() async {
        defer { disk.stop() }
        // A run that never knew its strap (none found) has nothing to keep: no file, so that a
        // service scanning for a strap nobody wears does not fill the folder with empty sessions.
        if file == nil, !failed, folder != nil {
            console.say("hrm \(command): nothing recorded: no strap was found")
            return
        }
        guard let file, !failed else { return }
        catchUp(file)
        await flush()
        guard !failed else { return }
        do throws(RecordingFile.Failure) {
            try await disk.run { () throws(RecordingFile.Failure) in try file.close() }
            console.say("hrm \(command): recorded \(lines) lines to \(file.path)")
        } catch {
            fail(error)
            return
        }
        outcome.kept(file.path)
        if let folder { await addToLibrary(file.path, in: folder) }
    }

    /// The session in the library's index (one file read, on the sink's thread), so that `hrm
    /// sessions` need not read it; a failure only delays that to the next listing.
    private func addToLibrary(_ path: String, in folder: SessionsFolder) async {
        let name = String(path.dropFirst(folder.path.count + 1))
        let failure = await disk.run { () -> LibraryFailure? in
            do throws(LibraryFailure) {
                try SessionLibraryIndex.recorded(name, in: folder)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            console.say(
                "hrm \(command): warning: the session library's index was not updated (\(failure)); hrm sessions will read the recording"
            )
        }
    }

    /// The header, once, and the events that waited for the file to exist.
    private func catchUp(_ file: RecordingFile) {
        if !headerWritten {
            headerWritten = true
            write(RecordingLine.header(start: start, command: command), to: file)
        }
        for earlier in waiting { write(RecordingLine.line(earlier, since: startInstant), to: file) }
        waiting = []
    }

    /// The session's file in the folder, once `event` names the strap.
    private func openInFolder(for event: MonitorEvent) async -> RecordingFile? {
        guard let folder, let device = event.device else { return nil }
        return await open(folder.path(start: start, device: device))
    }

    private func open(_ path: String) async -> RecordingFile? {
        do throws(RecordingFile.Failure) {
            let file = try await disk.run { () throws(RecordingFile.Failure) in
                try RecordingFile(creating: path)
            }
            self.file = file
            console.say("hrm \(command): recording to \(path)")
            return file
        } catch {
            fail(error)
            return nil
        }
    }

    private func write(_ line: String, to file: RecordingFile) {
        guard !failed else { return }
        buffer += line
        pendingLines += 1
    }

    /// The batch's lines to the file in one write(2); saved to disk every `syncInterval`. Both
    /// on the sink's thread, in one hop.
    package func flush() async {
        guard let file, !failed, !buffer.isEmpty else { return }
        let text = buffer
        let written = pendingLines
        buffer = ""
        pendingLines = 0
        let sync = ContinuousInstant.now - lastSync >= Self.syncInterval
        if sync { lastSync = .now }
        let (wrote, failure) = await disk.run { () -> (Bool, RecordingFile.Failure?) in
            do throws(RecordingFile.Failure) { try file.write(text) } catch { return (false, error) }
            guard sync else { return (true, nil) }
            do throws(RecordingFile.Failure) { try file.sync() } catch { return (true, error) }
            return (true, nil)
        }
        if wrote { lines += written }
        if let failure { fail(failure) }
    }

    /// The recording ends here; the session goes on.
    private func fail(_ failure: RecordingFile.Failure) {
        guard !failed else { return }
        failed = true
        waiting = []
        outcome.failed(
            lines == 0
                ? failure.description : "\(failure.description) (\(lines) lines were saved before that)")
        report(
            MonitorEvent(
                device: nil,
                kind: .error(
                    code: .recordingFailed,
                    message:
                        "\(failure.description); recording stopped after \(lines) lines, watching goes on",
                    hex: nil)))
    }
}
