import Synchronization
import Threads

/// The first sink: renders events and writes them to stdout at once, on the sender's thread (a
/// measurement on the thread that received it: its latency is what `make bench-watch` measures).
/// One lock keeps the renderer's state (live line, sparkline) and the output in order.
///
/// Errors also go to stderr, for people: every one in text and CSV output, and in JSON output
/// those that concern the run rather than one notification (those have no payload).
final class StdoutSink: EventSink {
    private struct State: ~Copyable {
        var renderer: any EventRenderer
        let output: LineWriter
    }

    private let state: Mutex<State>
    private let format: OutputFormat
    private let command: String
    private let closed: @Sendable () -> Void

    /// `closed` is called (once per event written after it) when stdout's reader has gone: a
    /// closed pipe must stop the session like Ctrl-C, not end the process, because the session
    /// still has notifications to release and a connection to close.
    init(
        renderer: sending any EventRenderer, format: OutputFormat, command: String,
        closed: @escaping @Sendable () -> Void
    ) {
        state = Mutex(State(renderer: renderer, output: LineWriter(exitWhenClosed: false)))
        self.format = format
        self.command = command
        self.closed = closed
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
        case .text where several: LiveTableRenderer(colour: colour)
        case .text: LiveRenderer(colour: colour)
        }
    }

    /// Writes the renderer's header (a CSV header), if it has one. Call before any event. From
    /// now on every diagnostic of the process comes through `interleave`, so that none lands on
    /// the end of a live line.
    func start() {
        state.withLock { state in
            if let header = state.renderer.header { state.output.raw(header) }
        }
        LiveDisplay.shared.withLock { $0 = self }
    }

    /// A line on stderr with the live display (if any) taken off the screen first and drawn
    /// again after it. Waits for the display 200 ms at most (a stuck stdout), then writes anyway.
    func interleave(_ line: String) {
        let written = state.withLock(waitingAtMost: .milliseconds(200)) { state -> Bool in
            if let clear = state.renderer.suspend() { state.output.raw(clear) }
            StandardOutput.writeDiagnostic(line)
            if let redraw = state.renderer.resume() { state.output.raw(redraw) }
            return true
        }
        if written == nil { StandardOutput.writeDiagnostic(line) }
    }

    func receive(_ event: MonitorEvent) {
        if case .error(_, let message, let hex) = event.kind, format != .json || hex == nil {
            let shown = TerminalText.sanitised(message, limit: TerminalText.messageLimit)
            interleave("hrm \(command): \(shown)" + (hex.map { " (\($0))" } ?? ""))
        }
        let (open, stall) = state.withLock { state -> (Bool, MonitorEvent?) in
            // The renderers end their lines themselves (a live line has none); every event goes
            // out at once.
            guard let text = state.renderer.render(event) else { return (!state.output.closed, nil) }
            let start = ContinuousClock.now
            state.output.raw(text)
            let took = ContinuousClock.now - start
            guard took >= Self.stallReported, !state.output.closed else { return (!state.output.closed, nil) }
            // The reader stopped taking output: what came meanwhile was lost before hrm saw it
            // (the kernel drops notifications on a full socket) or dropped and counted (StartNotify).
            let stall = Self.stall(took)
            if let line = state.renderer.render(stall) { state.output.raw(line) }
            return (true, stall)
        }
        if case .error(_, let message, _)? = stall?.kind {
            StandardOutput.diagnostic("hrm \(command): \(message)")
        }
        if !open { closed() }
    }

    /// A write that takes this long means the reader of stdout stopped reading for a while.
    static let stallReported: Duration = .seconds(2)

    static func stall(_ took: Duration) -> MonitorEvent {
        let shown = (took.inSeconds * 10).rounded() / 10
        return MonitorEvent(
            device: nil,
            kind: .error(
                code: .outputStalled,
                message:
                    "standard output took nothing for \(shown) s: notifications that came meanwhile may have been lost",
                hex: nil))
    }

    /// The renderer's last words (restoring a live display), then everything flushed; given up
    /// after 2 s when a write is stuck (stdout that nobody reads), so that hrm can still exit.
    func finish() async {
        LiveDisplay.shared.withLock { if $0 === self { $0 = nil } }
        _ = state.withLock(waitingAtMost: .seconds(2)) { state in
            if let text = state.renderer.finish() { state.output.raw(text) }
            state.output.flush()
        }
    }
}

/// The stdout sink that owns the terminal while a session runs, if any: diagnostics go through it.
enum LiveDisplay {
    static let shared = Mutex<StdoutSink?>(nil)
}
