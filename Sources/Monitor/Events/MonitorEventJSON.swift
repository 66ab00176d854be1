/// The JSON-lines contract (README, "JSON lines"): `type`, `time`, `device`, then the fields.
package enum MonitorEventJSON {
    package static func line(_ event: MonitorEvent) -> String {
        line(event, monotonicMilliseconds: nil, hex: nil)
    }

    /// The event's line, with a newline after it if asked (as `watch --json` prints it).
    package static func line(_ event: MonitorEvent, newline: Bool) -> String {
        line(event, monotonicMilliseconds: nil, hex: nil, newline: newline)
    }

    /// The line with what a recording adds: `mono_ms` after `time`, a measurement's raw `hex` at
    /// the end.
    package static func line(
        _ event: MonitorEvent, monotonicMilliseconds: Double?, hex: String?, newline: Bool = false
    ) -> String {
        var json = JSONLine(literalType: typeLiteral(event.kind))
        var last = Timestamp.LastSecond()
        addFields(
            of: event, to: &json, monotonicMilliseconds: monotonicMilliseconds, hex: hex, reusing: &last)
        return json.finished(newline: newline)
    }

    /// Writes events' lines, one at a time, into memory of its own: `watch --json`'s way to
    /// stdout, with no `String` and no allocation per notification. Not for several threads at
    /// once (stdout's sink uses it under its lock).
    package final class LineWriter {
        /// Where a line is built: 512 bytes hold any notification's (a longer line moves to the
        /// heap for its time).
        private let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 512)
        /// The last second written, whose date and time of day a line of the same second copies.
        /// Unchecked: one line at a time (above).
        @exclusivity(unchecked) private var last = Timestamp.LastSecond()

        /// A writer with nothing written yet.
        package init() {}

        deinit { scratch.deallocate() }

        /// The event's line, with a newline after it if asked, lent to `body` as bytes; what
        /// `body` returned. (Not generic, and no closure over the event: called from another
        /// module, a generic ran unspecialised, and a closure's context took a copy of the event,
        /// its strings and arrays retained and released, at every line.)
        package func withLine(
            _ event: MonitorEvent, newline: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> Bool
        ) -> Bool {
            var json = JSONLine(scratch: scratch, literalType: typeLiteral(event.kind))
            addFields(of: event, to: &json, monotonicMilliseconds: nil, hex: nil, reusing: &last)
            return json.withFinishedBytes(newline: newline, body)
        }
    }

    /// Everything after `type`.
    fileprivate static func addFields(
        of event: MonitorEvent, to json: inout JSONLine, monotonicMilliseconds: Double?, hex: String?,
        reusing last: inout Timestamp.LastSecond
    ) {
        json.add(.time, event.time, reusing: &last)
        if let monotonicMilliseconds { json.add(.monoMs, monotonicMilliseconds) }
        if let device = event.device { json.add(.device, device) }
        // A measurement, every notification's, first and inline; the other kinds out of line, so
        // that their code does not lie between a measurement's (#29).
        guard case .measurement(let m, let zone) = event.kind else {
            return addOtherFields(of: event, to: &json)
        }
        MeasurementRendering.addFields(of: m, to: &json)
        json.add(.zone, zone)
        if let hex { json.add(.hex, hex) }
    }

    /// The fields of every kind but a measurement.
    @inline(never)
    private static func addOtherFields(of event: MonitorEvent, to json: inout JSONLine) {
        switch event.kind {
        case .device(let name, let rssi, let services, let connected):
            json.add("address", event.device)
            json.add("name", name)
            json.add("rssi", rssi)
            json.add("services", services)
            json.add("connected", connected)
        case .status(let state, let detail):
            json.add("state", state.rawValue)
            if let detail { json.add("detail", detail) }
        case .info(let name, let location, let battery, let manufacturer, let model, let notify):
            json.add("name", name)
            json.add("location", location?.identifier)
            json.add("battery", battery)
            json.add("manufacturer", manufacturer)
            json.add("model", model)
            if let notify { json.add("notify", notify.rawValue) }
        case .measurement:
            break  // addFields'
        case .battery(let percent):
            json.add("percent", percent)
        case .hrv(let metrics, _):
            HRVRendering.addFields(of: metrics, to: &json)
            json.add("window_s", HRVRendering.rounded(metrics.seconds))
        case .alert(let alert):
            json.add("alert", alert.direction.rawValue)
            json.add("bpm", alert.bpm)
            json.add("bound", alert.bound)
        case .summary(let report):
            report.addFields(to: &json)
        case .error(let code, let message, let hex):
            json.add("code", code.rawValue)
            json.add("message", message)
            if let hex { json.add("hex", hex) }
        case .relay(let state, let consumer):
            json.add("state", state.rawValue)
            if let consumer { json.add("consumer", consumer) }
        case .ecg(let frame):
            json.add("sensor_ns", Int(clamping: frame.sensorNanoseconds))
            json.add("rate_hz", frame.rateHz)
            json.add("uv", frame.microvolts)
            if frame.missingSamples > 0 { json.add("lost_samples", frame.missingSamples) }
        case .acc(let frame):
            json.add("sensor_ns", Int(clamping: frame.sensorNanoseconds))
            json.add("rate_hz", frame.rateHz)
            json.add("range_g", frame.rangeG)
            json.add("mg", triples: frame.milliG)
            if frame.missingSamples > 0 { json.add("lost_samples", frame.missingSamples) }
        case .ecgBeat(let beat):
            json.add("sensor_ns", Int(clamping: beat.sensorNanoseconds))
            json.add("rr_ms", beat.rrMilliseconds)
        }
    }

    package static func typeName(_ kind: MonitorEvent.Kind) -> String {
        typeLiteral(kind).text
    }

    /// `typeName` as a piece of the measurement line's literal, copied into a line as it is.
    package static func typeLiteral(_ kind: MonitorEvent.Kind) -> JSONLiteral {
        switch kind {
        case .device: .device
        case .status: .status
        case .info: .info
        case .measurement: .measurement
        case .battery: .battery
        case .hrv: .hrv
        case .alert: .alert
        case .summary: .summary
        case .error: .error
        case .relay: .relay
        case .ecg: .ecg
        case .acc: .acc
        case .ecgBeat: .ecgBeat
        }
    }
}
