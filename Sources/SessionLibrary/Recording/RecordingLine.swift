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

    package static func line(_ event: MonitorEvent, since start: ContinuousInstant) -> String {
        let offset = event.instant - start
        let milliseconds =
            Double(offset.components.seconds) * 1000 + Double(offset.components.attoseconds) / 1e15
        let monotonic = (milliseconds * 1000).rounded() / 1000
        switch event.kind {
        case .ecg(let frame):
            return sensorFrame(event, monotonic, measurement: "ecg", rateHz: frame.rateHz, rangeG: nil)
        case .acc(let frame):
            return sensorFrame(
                event, monotonic, measurement: "acc", rateHz: frame.rateHz, rangeG: frame.rangeG)
        default:
            return MonitorEventJSON.line(
                event, monotonicMilliseconds: monotonic, hex: event.payload.map { HexPayload.format($0) })
                + "\n"
        }
    }

    /// An ECG or acceleration frame as the strap sent it, with the settings its stream was
    /// started with (what decoding it again needs): `{"type":"pmd",...,"measurement":"ecg",
    /// "rate_hz":130,"hex":"00..."}`. The decoded samples are not kept: the frame is the truth.
    private static func sensorFrame(
        _ event: MonitorEvent, _ monotonic: Double, measurement: String, rateHz: Int, rangeG: Int?
    ) -> String {
        var json = JSONLine(type: "pmd")
        json.add("time", event.time.description)
        json.add("mono_ms", monotonic)
        if let device = event.device { json.add("device", device) }
        json.add("measurement", measurement)
        json.add("rate_hz", rateHz)
        if let rangeG { json.add("range_g", rangeG) }
        json.add("hex", event.payload.map { HexPayload.format($0) } ?? "")
        return json.line + "\n"
    }
}
