package import BlueZ
package import HeartRate

/// The stable `code` of an `error` event: a public contract (scripts `switch` on it), so every code
/// hrm can send is declared here, once, and listed in the README's JSON-lines table; a test keeps
/// the two in step. The codes of the layers below (a malformed payload, Bluetooth, MQTT) come in
/// through their own typed codes.
package struct EventErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as it appears in JSON lines and messages.
    package let rawValue: String

    package init(rawValue: String) { self.rawValue = rawValue }

    package var description: String { rawValue }

    /// A payload that does not decode.
    package init(_ code: HeartRateDecodingError.Code) { rawValue = code.rawValue }
    /// A Bluetooth failure.
    package init(_ code: BlueZError.Code) { rawValue = code.rawValue }

    // The session's own codes, in the README's order.

    /// bluetoothd announced a notification whose value is not bytes (counted as malformed).
    package static let malformedValue = EventErrorCode(rawValue: "malformed_value")
    /// StartNotify: the output did not keep up and the oldest waiting notifications were dropped.
    package static let notificationsDropped = EventErrorCode(rawValue: "notifications_dropped")
    /// AcquireNotify was refused or gave no SEQPACKET socket: StartNotify instead.
    package static let acquireNotifyFailed = EventErrorCode(rawValue: "acquire_notify_failed")
    /// The reader of standard output took nothing for 2 s or more.
    package static let outputStalled = EventErrorCode(rawValue: "output_stalled")
    /// A characteristic of the strap's `info` did not come within 3 s.
    package static let infoUnavailable = EventErrorCode(rawValue: "info_unavailable")
    /// The `--on-alert` command failed, or alerts came faster than the commands ran.
    package static let alertCommandFailed = EventErrorCode(rawValue: "alert_command_failed")
    /// The recording cannot be made, or the disk failed during the session.
    package static let recordingFailed = EventErrorCode(rawValue: "recording_failed")
    /// Events came faster than the disk took them: not recorded.
    package static let recordingDropped = EventErrorCode(rawValue: "recording_dropped")
    /// The MQTT broker went away during the session: messages wait for it.
    package static let mqttDisconnected = EventErrorCode(rawValue: "mqtt_disconnected")
    /// The broker was away too long: the oldest waiting messages were dropped.
    package static let mqttDropped = EventErrorCode(rawValue: "mqtt_dropped")
    /// `--relay`: bluetoothd took no values while a consumer was subscribed (they were not
    /// relayed), or the relay's queue of battery and info changes overflowed.
    package static let relayDropped = EventErrorCode(rawValue: "relay_dropped")
    /// `decode`: text that is not hex.
    package static let invalidHex = EventErrorCode(rawValue: "invalid_hex")
    /// `--osc`: a message could not be sent (nothing listening, the network refused it), or the
    /// host given does not resolve.
    package static let oscSendFailed = EventErrorCode(rawValue: "osc_send_failed")

    /// `--ecg`/`--acc`: the strap has no PMD service (Polar Measurement Data), or does not offer
    /// the measurement asked for. Heart rate goes on.
    package static let pmdUnavailable = EventErrorCode(rawValue: "pmd_unavailable")
    /// `--ecg`/`--acc`: the strap refused to start the stream (its status said), or did not answer.
    /// Heart rate goes on.
    package static let pmdStartFailed = EventErrorCode(rawValue: "pmd_start_failed")
    /// A PMD data frame that does not decode (its `hex` is in the event).
    package static let malformedPMDFrame = EventErrorCode(rawValue: "malformed_pmd_frame")

    /// Every code the monitoring core sends: the payload's, Bluetooth's and the session's own
    /// (`all`, with the outputs' libraries' codes, is the CLI's).
    package static var core: [EventErrorCode] {
        HeartRateDecodingError.Code.allCases.map(EventErrorCode.init)
            // `cancelled` is a stop asked for, never sent as an event.
            + BlueZError.Code.allCases.filter { $0 != .cancelled }.map(EventErrorCode.init)
            + [
                .malformedValue, .notificationsDropped, .acquireNotifyFailed, .outputStalled,
                .infoUnavailable,
                .alertCommandFailed, .recordingFailed, .recordingDropped, .mqttDisconnected, .mqttDropped,
                .invalidHex, .oscSendFailed, .relayDropped, .pmdUnavailable, .pmdStartFailed,
                .malformedPMDFrame,
            ]
    }
}
