package import Monitor
import SessionLibrary
import Spawn
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// `--on-alert COMMAND`: runs the user's command once per `alert` event, through `/bin/sh -c` as
/// the user wrote it; what the alert is about comes in the environment (`HRM_ALERT`, `HRM_BPM`,
/// `HRM_BOUND`, `HRM_DEVICE`), never spliced into the command text. The command's output goes to
/// stderr, so that it cannot break JSON lines or CSV on stdout; its stdin is /dev/null.
///
/// It runs behind a `QueuedSink`: commands run one at a time on the sink's task, never on the
/// strap's thread; one still running after `timeout` is stopped. Every wait for the child is an
/// event on a thread of its own (`ChildProcess.wait`, `stop`): none holds a thread of Swift's pool.
package struct AlertCommand: SlowEventSink {
    package let command: String
    package let timeout: Duration
    /// Sends a problem (`alert_command_failed`) into the session, from the sink's task.
    package let report: @Sendable (MonitorEvent) -> Void

    package func write(_ event: MonitorEvent) async throws {
        guard case .alert(let alert) = event.kind else { return }
        let variables = [
            "HRM_ALERT=\(alert.direction.rawValue)", "HRM_BPM=\(alert.bpm)", "HRM_BOUND=\(alert.bound)",
            "HRM_DEVICE=\(event.device ?? "")",
        ]
        let names = Set(variables.map { $0.prefix { $0 != "=" } })
        let environment = ChildProcess.currentEnvironment.filter { !names.contains($0.prefix { $0 != "=" }) }
        let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if devNull >= 0 { Glibc.close(devNull) } }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", command], environment: environment + variables,
                stdoutFD: STDERR_FILENO, stdinFD: devNull >= 0 ? devNull : nil)
        } catch {
            return problem(event, "--on-alert: \(error)")
        }
        guard let status = await child.wait(timeout: timeout) else {
            await child.stop()
            return problem(event, "--on-alert command still running after \(timeout.inSeconds) s: stopped")
        }
        if status != 0 { problem(event, "--on-alert command exited with status \(status)") }
    }

    package func close() async {}

    private func problem(_ event: MonitorEvent, _ message: String) {
        report(
            MonitorEvent(
                device: event.device, kind: .error(code: .alertCommandFailed, message: message, hex: nil))
        )
    }
}
