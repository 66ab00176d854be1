import Monitor
import Outputs
import SessionLibrary

/// The session's display on stdout, in the format chosen: a live line or table on a terminal,
/// lines, JSON lines or CSV otherwise. Every session has it, last.
struct StdoutOutput: OutputProvider {
    /// text, json or csv.
    var format: OutputFormat = .text
    /// Colour on a terminal: auto, always or never.
    var colour: ColorChoice = .auto

    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        let options = context.options
        let live = StandardOutput.isLiveTerminal
        let stop = context.stop
        let sink = StdoutSink(
            renderer: StdoutSink.renderer(
                for: format, terminal: live, colour: colour.colours(live: live),
                several: options.straps.count > 1 || options.all),
            format: format, command: context.command, closed: { stop.stop(.outputClosed) })
        return SessionOutput(delivery: .display(sink))
    }
}
