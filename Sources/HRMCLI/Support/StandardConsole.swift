import Monitor
import Outputs
import SessionLibrary

/// A session's words for people, on stderr: `hrm watch: ...` and its hints. A failure before the
/// start is also an `error` line on stdout in JSON output, so that a script reading JSON lines
/// sees why nothing came.
struct StandardConsole: SessionConsole {
    /// `watch`, `record` or `serve`.
    let command: String
    /// The output is JSON lines.
    let json: Bool

    func failedBeforeStart(_ failure: OutputFailure) {
        StandardOutput.diagnostic("hrm \(command): \(failure.message)")
        if json {
            let event = MonitorEvent(
                device: nil, kind: .error(code: failure.code, message: failure.message, hex: nil))
            LineWriter().line(MonitorEventJSON.line(event), flush: true)
        }
    }

    func say(_ text: String) { StandardOutput.diagnostic(text) }
}
