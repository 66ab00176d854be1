import Monitor

#if canImport(Glibc)
    import Glibc
#endif

/// The session's display for `hrm readiness`: `ReadinessProgress` on stderr (stdout is for the
/// result), a countdown redrawn in place when stderr is a terminal.
struct ReadinessDisplay: OutputProvider {
    let collector: ReadingCollector

    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        let live =
            isatty(STDERR_FILENO) == 1 && (getenv("TERM").map { String(cString: $0) != "dumb" } ?? true)
        let stop = context.stop
        let sink = StdoutSink(
            renderer: ReadinessProgress(live: live, collector: collector), format: .text,
            command: context.command, closed: { stop.stop(.outputClosed) }, fd: STDERR_FILENO)
        return SessionOutput(delivery: .display(sink))
    }
}
