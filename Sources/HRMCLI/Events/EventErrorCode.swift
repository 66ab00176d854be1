import BlueZ
import HeartRate
import MQTT

/// The stable `code` of an `error` event: a public contract (scripts `switch` on it), so every code
/// hrm can send is declared here, once, and listed in the README's JSON-lines table; a test keeps
/// the two in step. The codes of the layers below (a malformed payload, Bluetooth, MQTT) come in
/// through their own typed codes.
struct EventErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as it appears in JSON lines and messages.
    let rawValue: String

    init(rawValue: String) { self.rawValue = rawValue }

    var description: String { rawValue }

    /// A payload that does not decode.
    init(_ code: HeartRateDecodingError.Code) { rawValue = code.rawValue }
    /// A Bluetooth failure.
    init(_ code: BlueZError.Code) { rawValue = code.rawValue }
    /// The MQTT broker refused, was not reachable, or failed.
    init(_ code: MQTTError.Code) { rawValue = code.rawValue }

    // The session's own codes, in the README's order.

    /// bluetoothd announced a notification whose value is not bytes (counted as malformed).
    static let malformedValue = EventErrorCode(rawValue: "malformed_value")
    /// StartNotify: the output did not keep up and the oldest waiting notifications were dropped.
    static let notificationsDropped = EventErrorCode(rawValue: "notifications_dropped")
    /// AcquireNotify was refused or gave no SEQPACKET socket: StartNotify instead.
    static let acquireNotifyFailed = EventErrorCode(rawValue: "acquire_notify_failed")
    /// The reader of standard output took nothing for 2 s or more.
    static let outputStalled = EventErrorCode(rawValue: "output_stalled")
    /// A characteristic of the strap's `info` did not come within 3 s.
    static let infoUnavailable = EventErrorCode(rawValue: "info_unavailable")
    /// The `--on-alert` command failed, or alerts came faster than the commands ran.
    static let alertCommandFailed = EventErrorCode(rawValue: "alert_command_failed")
    /// The recording cannot be made, or the disk failed during the session.
    static let recordingFailed = EventErrorCode(rawValue: "recording_failed")
    /// Events came faster than the disk took them: not recorded.
    static let recordingDropped = EventErrorCode(rawValue: "recording_dropped")
    /// The MQTT broker went away during the session: messages wait for it.
    static let mqttDisconnected = EventErrorCode(rawValue: "mqtt_disconnected")
    /// The broker was away too long: the oldest waiting messages were dropped.
    static let mqttDropped = EventErrorCode(rawValue: "mqtt_dropped")
    /// `decode`: text that is not hex.
    static let invalidHex = EventErrorCode(rawValue: "invalid_hex")

    /// Every code hrm sends, for the README check: the payload's, Bluetooth's, MQTT's and the
    /// session's own.
    static var all: [EventErrorCode] {
        HeartRateDecodingError.Code.allCases.map(EventErrorCode.init)
            // `cancelled` is a stop asked for, never sent as an event.
            + BlueZError.Code.allCases.filter { $0 != .cancelled }.map(EventErrorCode.init)
            + MQTTError.Code.allCases.map(EventErrorCode.init)
            + [
                .malformedValue, .notificationsDropped, .acquireNotifyFailed, .outputStalled,
                .infoUnavailable,
                .alertCommandFailed, .recordingFailed, .recordingDropped, .mqttDisconnected, .mqttDropped,
                .invalidHex,
            ]
    }
}
