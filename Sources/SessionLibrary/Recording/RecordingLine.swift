import HeartRate
package import Monitor

/// The lines of a recording (format 1, documented in the README, "Recording format"): a header,
/// then every event as `watch --json` prints it with `mono_ms` after `time` (milliseconds since
/// the recording started, on the monotonic clock) and, on a measurement, the notification's raw
/// payload as `hex` at the end: the truth a better decoder can read again.
package enum RecordingLine {
    package static let format = 1

    /// `{"type":"recording","format":1,"hrm":"0.1.0","start":"...","command":"watch"}`
    package static func header(start: Timestamp, command: String) -> String {
        var json = JSONLine(type: "recording")
        json.add("format", format)
        json.add("hrm", HRMVersion.current)
        json.add("start", start.description)
        json.add("command", command)
        return json.line + "\n"
    }

    package static func line(_ event: MonitorEvent, since start: ContinuousClock.Instant) -> String {
        let offset = event.instant - start
        let milliseconds =
            Double(offset.components.seconds) * 1000 + Double(offset.components.attoseconds) / 1e15
        return MonitorEventJSON.line(
            event, monotonicMilliseconds: (milliseconds * 1000).rounded() / 1000,
            hex: event.payload.map { HexPayload.format($0) }) + "\n"
    }
}
