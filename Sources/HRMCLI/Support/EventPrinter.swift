import BlueZ
import Synchronization

/// Renders events and writes them to stdout, from any thread: `watch` prints measurements on the
/// thread that receives them (see `MeasurementSink`) and status lines from its session task.
/// One lock keeps the renderer's state (live line, sparkline) and the output in order.
final class EventPrinter: Sendable {
    private struct State: ~Copyable {
        var renderer: any EventRenderer
        let output: LineWriter
    }

    private let state: Mutex<State>
    private let json: Bool

    init(renderer: sending any EventRenderer, json: Bool) {
        // A closed pipe (`| head`) must stop the session like Ctrl-C, not end the process: the
        // session still has a notify session to release and a connection to close.
        state = Mutex(State(renderer: renderer, output: LineWriter(exitWhenClosed: false)))
        self.json = json
    }

    /// Prints `event`; returns false once stdout's reader has gone.
    @discardableResult
    func emit(_ event: MonitorEvent) -> Bool {
        if case .error(_, let message, let hex) = event.kind, !json {
            StandardOutput.diagnostic("hrm watch: \(message)" + (hex.map { " (\($0))" } ?? ""))
        }
        return state.withLock { state in
            // The renderers end their lines themselves (a live line has none); every event goes
            // out at once.
            if let text = state.renderer.render(event) { state.output.raw(text) }
            return !state.output.closed
        }
    }

    /// Writes text as it is (a CSV header) at once.
    func raw(_ text: String) {
        state.withLock { $0.output.raw(text) }
    }

    /// The renderer's last words (restoring a live display), then everything flushed.
    func finish() {
        state.withLock { state in
            if let text = state.renderer.finish() { state.output.raw(text) }
            state.output.flush()
        }
    }

    var header: String? { state.withLock { $0.renderer.header } }

    /// Reports a failure that ends the run (stderr, and an `error` line in JSON mode).
    func report(_ error: BlueZError) -> Int32 {
        let json = self.json
        return state.withLock { Failure.report(error, command: "watch", json: json ? $0.output : nil) }
    }
}
