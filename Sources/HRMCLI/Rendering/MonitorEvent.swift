import HRV
import HeartRate

/// One thing `scan` or `watch` reports. Logic produces these; renderers turn them into lines.
struct MonitorEvent: Sendable {
    enum State: String, Sendable {
        case scanning, connecting, connected, disconnected, reconnecting, stopped
    }

    enum Kind: Sendable {
        /// A heart-rate monitor (or, with `--all`, any device) seen by a scan.
        case device(name: String?, rssi: Int?, services: [String], connected: Bool)
        case status(State, detail: String?)
        /// What hrm learnt once connected. `location` is nil when the strap has no 0x2A38.
        case info(
            name: String?, location: BodySensorLocation?, battery: Int?, manufacturer: String?, model: String?
        )
        /// A decoded notification, with its heart-rate zone when zones are set (0 below zone 1).
        case measurement(HeartRateMeasurement, zone: Int? = nil)
        case battery(percent: Int)
        /// HRV over the most recent beats, sent right after the measurement that brought the
        /// last of them.
        /// (Indirect, as the summary: rare events that would make every event bigger.)
        indirect case hrv(HRVMetrics)
        /// The heart rate crossed an `--alert-above`/`--alert-below` bound and stayed there.
        case alert(HeartRateAlert)
        /// A strap's session in figures, sent just before the `stopped` status.
        indirect case summary(SessionReport)
        /// A stable `code`, a message for people, and the payload's hex for a malformed frame.
        case error(code: EventErrorCode, message: String, hex: String?)
    }

    let time: Timestamp
    /// The same moment on the monotonic clock: a recording's offsets, which a change of the
    /// wall clock cannot bend.
    let instant: ContinuousClock.Instant
    /// The device's address, upper case with colons, where the event concerns one.
    let device: String?
    let kind: Kind
    /// A notification's payload as received, for a measurement: what a recording keeps (the
    /// decoded fields are only one reading of it).
    let payload: [UInt8]?

    init(
        time: Timestamp = .now(), instant: ContinuousClock.Instant = .now, device: String?, kind: Kind,
        payload: [UInt8]? = nil
    ) {
        self.time = time
        self.instant = instant
        self.device = device
        self.kind = kind
        self.payload = payload
    }

    /// This event with another kind: the same moment, device and payload.
    func with(_ kind: Kind) -> MonitorEvent {
        MonitorEvent(time: time, instant: instant, device: device, kind: kind, payload: payload)
    }

    /// An event a processor adds because of this one: the same moment and device.
    func followedBy(_ kind: Kind, device: String? = nil) -> MonitorEvent {
        MonitorEvent(time: time, instant: instant, device: device ?? self.device, kind: kind)
    }
}

/// The JSON-lines contract (README, "JSON lines"): `type`, `time`, `device`, then the fields.
enum MonitorEventJSON {
    static func line(_ event: MonitorEvent) -> String {
        line(event, monotonicMilliseconds: nil, hex: nil)
    }

    /// The line with what a recording adds: `mono_ms` after `time`, a measurement's raw `hex` at
    /// the end.
    static func line(_ event: MonitorEvent, monotonicMilliseconds: Double?, hex: String?) -> String {
        var json = JSONLine(type: typeName(event.kind))
        json.add("time", event.time.description)
        if let monotonicMilliseconds { json.add("mono_ms", monotonicMilliseconds) }
        if let device = event.device { json.add("device", device) }
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
        case .info(let name, let location, let battery, let manufacturer, let model):
            json.add("name", name)
            json.add("location", location?.identifier)
            json.add("battery", battery)
            json.add("manufacturer", manufacturer)
            json.add("model", model)
        case .measurement(let m, let zone):
            MeasurementRendering.addFields(of: m, to: &json)
            json.add("zone", zone)
            if let hex { json.add("hex", hex) }
        case .battery(let percent):
            json.add("percent", percent)
        case .hrv(let metrics):
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
        }
        return json.line
    }

    static func typeName(_ kind: MonitorEvent.Kind) -> String {
        switch kind {
        case .device: "device"
        case .status: "status"
        case .info: "info"
        case .measurement: "measurement"
        case .battery: "battery"
        case .hrv: "hrv"
        case .alert: "alert"
        case .summary: "summary"
        case .error: "error"
        }
    }
}

/// `--csv`: a header, then one row per measurement. Lists are space-separated inside a field.
enum MeasurementCSV {
    static let header = "time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format,zone"

    /// The row for a measurement event; nil for every other kind.
    static func row(_ event: MonitorEvent) -> String? {
        guard case .measurement(let m, let zone) = event.kind else { return nil }
        return [
            event.time.description,
            event.device ?? "",
            String(m.heartRate),
            m.sensorContact.identifier,
            m.energyExpended.map { String($0) } ?? "",
            m.rrIntervals.map { String($0.ticks) }.joined(separator: " "),
            m.rrIntervals.map { MeasurementRendering.milliseconds($0.milliseconds) }.joined(separator: " "),
            m.valueFormat.rawValue,
            zone.map { String($0) } ?? "",
        ].joined(separator: ",")
    }
}
