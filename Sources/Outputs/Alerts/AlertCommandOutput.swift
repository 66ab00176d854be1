import Monitor
import SessionLibrary

/// `--on-alert COMMAND`: the command run once per alert, queued (16 alerts may wait; past that
/// the oldest are not run, and how many is said).
package struct AlertCommandOutput: OutputProvider {
    /// The shell command, as the user wrote it.
    package let command: String

    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        let alerts = AlertCommand(command: command, timeout: .seconds(30), report: context.report)
        let queue = OutputQueue(capacity: 16, policy: .dropOldest, droppedCode: .alertCommandFailed) {
            count in
            "--on-alert: \(count) alert\(count == 1 ? "" : "s") came while earlier commands still ran: not run"
        }
        return SessionOutput(delivery: .queued(alerts, queue))
    }

    /// Every stored property, as given.
    package init(command: String) {
        self.command = command
    }
}
