import BlueZ
import Monitor
import Outputs
import SessionLibrary

extension Failure {
    /// Reports `error` on stderr (and as an `error` event for JSON output) and returns the status.
    /// A cancelled call (Ctrl-C while it was on its way) is a stop asked for: nothing to report.
    static func report(_ error: BlueZError, command: String, json: LineWriter?) -> Int32 {
        if error.code == .cancelled { return exitStatus(error) }
        // The message may carry bluetoothd's words or a name from outside: escaped and capped
        // for people; the JSON line keeps it exact.
        let message = TerminalText.sanitised(error.message, limit: TerminalText.messageLimit)
        StandardOutput.diagnostic(
            "hrm \(command): \(message)" + (hint(error).map { "\n  hint: \($0)" } ?? ""))
        if let json {
            json.line(
                MonitorEventJSON.line(
                    MonitorEvent(
                        device: nil,
                        kind: .error(code: EventErrorCode(error.code), message: error.message, hex: nil)
                    )), flush: true)
        }
        return exitStatus(error)
    }
}
