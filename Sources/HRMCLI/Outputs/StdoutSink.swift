import Monitor
import Outputs
import SessionLibrary
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// The first sink: renders events and writes them to stdout at once. On the thread that received
/// a measurement (the strap's notification reader, one of hrm's own) the write is made there,
/// right after the pipeline's lock is released: its latency is what `make bench-watch` measures,
/// and one wake-up per notification is what it costs. From a task of Swift's pool (a status, a
/// problem a queued sink reports) the write goes to a thread of the sink's own
/// (`StdoutWriter`), so that a stdout nobody reads holds up neither the pool nor the other sinks.
/// One lock keeps the renderer's state (live line, sparkline) and the order of the output.
///
/// Errors also go to stderr, for people: every one in text and CSV output, and in JSON output
/// those that concern the run rather than one notification (those have no payload).
final class StdoutSink: EventSink {
    private struct State: ~Copyable {
        var renderer: any EventRenderer
        /// stderr lines of `receive`, written by `afterSend` outside the pipeline's lock (without
        /// a live display; with one they queue in order with stdout's bytes).
        var diagnostics: [String] = []
        /// Malformed notifications said once per strap and kind; the later ones counted, and
        /// said as a count before the final status. In the order they first came.
        var repeated: [(key: String, message: String, count: Int)] = []
    }

    private let state: Mutex<State>
    /// Whether `state.diagnostics` has lines, so that `afterSend` takes the lock only then: set
    /// and cleared under the lock, read without it (by the thread that queued them, at the
    /// latest, after its own send: none is left behind).
    private let hasDiagnostics = Atomic(false)
    private let format: OutputFormat
    private let command: String
    private let closed: @Sendable () -> Void
    /// A live display on a terminal: a stderr line must come between taking it off and drawing it
    /// again, so stderr lines queue with stdout's bytes.
    private let live: Bool
    private let output: StdoutWriter
    private let owner: Owner

    /// `closed` is called (once per event written after it) when stdout's reader has gone: a
    /// closed pipe must stop the session like Ctrl-C, not end the process, because the session
    /// still has notifications to release and a connection to close. `fd` and `errorFD` (where
    /// a live display's diagnostics go) are for tests.
    init(
        renderer: sending any EventRenderer, format: OutputFormat, command: String,
        closed: @escaping @Sendable () -> Void, fd: Int32 = STDOUT_FILENO, errorFD: Int32 = STDERR_FILENO
    ) {
        live = renderer.redrawsInPlace
        state = Mutex(State(renderer: renderer))
        self.format = format
        self.command = command
        self.closed = closed
        let owner = Owner()
        output = StdoutWriter(fd: fd, errorFD: errorFD, stalled: { owner.sink?.stalled($0) }, closed: closed)
        self.owner = owner
        owner.sink = self
    }

    /// The sink its writer reports a stall to. The sink owns the writer, so the cycle is broken
    /// by hand: `finish` lets the sink go. (A weak reference would give the sink a side table,
    /// and each retain of it, one per notification, the runtime's slow path.)
    private final class Owner: Sendable {
        private let reference = Mutex<StdoutSink?>(nil)
        var sink: StdoutSink? {
            get { reference.withLock { $0 } }
            set { reference.withLock { $0 = newValue } }
        }
    }

    /// The renderer for `format` on this stdout: a live display on a terminal, lines otherwise.
    /// With `several` straps, a live table instead of a live line, and lines that name their
    /// strap.
    static func renderer(for format: OutputFormat, terminal: Bool, colour: Bool, several: Bool = false)
        -> any EventRenderer
    {
        switch format {
        case .json: JSONLinesRenderer()
        case .csv: CSVRenderer()
        case .text where !terminal: TextLinesRenderer(namesDevice: several)
        case .text where several: LiveTableRenderer(colour: colour, reflows: TerminalReflow.current)
        case .text: LiveRenderer(colour: colour, reflows: TerminalReflow.current)
        }
    }

    /// Writes the renderer's header (a CSV header), if it has one. Call before any event. From
    /// now on every diagnostic of the process comes through `interleave`, so that none lands on
    /// the end of a live line.
    func start() {
        state.withLock { state in
            if let header = state.renderer.header { output.append(header) }
        }
        output.flush()
        LiveDisplay.shared.withLock { $0 = self }
    }

    /// A line on stderr with the live display (if any) taken off the screen first and drawn
    /// again after it, in order with stdout's output; without one, written at once. Never waits
    /// for a stdout that is stuck.
    func interleave(_ line: String) {
        guard live, state.withLock({ queue(line, &$0) }) else { return StandardOutput.writeDiagnostic(line) }
        output.flush()
    }

    /// Queues `line` for stderr between the live display's removal and its redraw; false when it
    /// cannot be queued (stdout's reader has gone).
    private func queue(_ line: String, _ state: inout State) -> Bool {
        if let clear = state.renderer.suspend() { output.append(clear) }
        let queued = output.appendError(line)
        if let redraw = state.renderer.resume() { output.append(redraw) }
        return queued
    }

    /// Renders `event` into the queue for stdout; the write comes in `afterSend`.
    func receive(_ event: MonitorEvent) {
        switch event.kind {
        case .error, .status(.stopped, _): return receiveWithDiagnostics(event)
        default: break
        }
        // Every notification's way: rendered and queued, no stderr line to consider.
        let open = state.withLock { state -> Bool in
            state.renderer.write(event) { output.append($0) } ?? !output.closed
        }
        if !open { closed() }
    }

    /// `receive` for an error (a line for stderr, repeats counted) or the final status (the
    /// counted repeats said before it). Out of line: a notification never comes here (#29).
    @inline(never)
    private func receiveWithDiagnostics(_ event: MonitorEvent) {
        var message: String? = nil
        var malformed: String? = nil
        if case .error(let code, let text, let hex) = event.kind, format != .json || hex == nil {
            let shown = TerminalText.sanitised(text, limit: TerminalText.messageLimit)
            message = "hrm \(command): \(shown)" + (hex.map { " (\($0))" } ?? "")
            // A strap sending bad frames sends many: one line, not one per frame.
            if hex != nil { malformed = "\(event.device ?? "")|\(code.rawValue)" }
        }
        let open = state.withLock { state -> Bool in
            if let key = malformed, let index = state.repeated.firstIndex(where: { $0.key == key }) {
                state.repeated[index].count += 1
                message = nil
            } else if let key = malformed, let message {
                state.repeated.append((key, message, 0))
            }
            if case .status(.stopped, _) = event.kind {
                for entry in state.repeated where entry.count > 0 {
                    let count = entry.count
                    let line = "\(entry.message) (repeated \(count) more time\(count == 1 ? "" : "s"))"
                    if !live || !queue(line, &state) { queueDiagnostic(line, &state) }
                }
                state.repeated = []
            }
            if let message, !live || !queue(message, &state) { queueDiagnostic(message, &state) }
            // The renderers end their lines themselves (a live line has none).
            return state.renderer.write(event) { output.append($0) } ?? !output.closed
        }
        if !open { closed() }
    }

    /// After the pipeline's lock: stderr lines, then stdout's write (here on a thread of hrm's
    /// own, else handed to the writer's thread).
    func afterSend() {
        if hasDiagnostics.load(ordering: .acquiring) {
            let lines = state.withLock { state -> [String] in
                hasDiagnostics.store(false, ordering: .releasing)
                defer { state.diagnostics = [] }
                return state.diagnostics
            }
            for line in lines { StandardOutput.writeDiagnostic(line) }
        }
        output.flush()
    }

    /// A line for stderr, written by `afterSend`.
    private func queueDiagnostic(_ line: String, _ state: inout State) {
        state.diagnostics.append(line)
        hasDiagnostics.store(true, ordering: .releasing)
    }

    /// A write that takes this long means the reader of stdout stopped reading for a while.
    static let stallReported: Duration = .seconds(2)

    /// The reader stopped taking output: what came meanwhile was lost before hrm saw it (the
    /// kernel drops notifications on a full socket, StartNotify's queue drops and counts) or, past
    /// the writer's bound, dropped here and counted. Called on the writing thread, under no lock.
    private func stalled(_ stall: StdoutWriter.Stall) {
        let event = Self.stall(stall.took, dropped: stall.dropped)
        state.withLock { state in
            if let line = state.renderer.render(event) { output.append(line) }
        }
        if case .error(_, let message, _) = event.kind { interleave("hrm \(command): \(message)") }
    }

    static func stall(_ took: Duration, dropped: Int = 0) -> MonitorEvent {
        let shown = (took.inSeconds * 10).rounded() / 10
        let lost =
            dropped == 0
            ? ""
            : "; \(dropped) \(dropped == 1 ? "line" : "lines") of output dropped (more than 1 MiB waited)"
        return MonitorEvent(
            device: nil,
            kind: .error(
                code: .outputStalled,
                message:
                    "standard output took nothing for \(shown) s: notifications that came meanwhile may have been lost\(lost)",
                hex: nil))
    }

    /// The renderer's last words (restoring a live display), then everything written; given up
    /// after 2 s when a write is stuck (stdout that nobody reads), so that hrm can still exit.
    func finish() async {
        LiveDisplay.shared.withLock { if $0 === self { $0 = nil } }
        state.withLock { state in
            if let text = state.renderer.finish() { output.append(text) }
        }
        await output.finish(timeout: .seconds(2))
        owner.sink = nil
    }
}

/// The stdout sink that owns the terminal while a session runs, if any: diagnostics go through it.
enum LiveDisplay {
    static let shared = Mutex<StdoutSink?>(nil)
}
