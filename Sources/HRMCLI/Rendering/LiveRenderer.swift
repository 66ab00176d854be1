import HRV
import HeartRate
import Monitor
import Outputs
import SessionLibrary

/// On a terminal: info and status lines scroll, and one live line at the bottom is redrawn in
/// place with the heart rate, contact, the latest RR intervals, a sparkline of the last minute
/// and the battery.
struct LiveRenderer: EventRenderer {
    let colour: Bool
    /// The terminal's width, asked at each draw: a resized window (SIGWINCH) is followed.
    let width: () -> Int
    /// The terminal rewraps lines when its window narrows (`TerminalReflow`).
    let reflows: Bool
    private var history: [(time: Int64, bpm: Int)] = []
    private var latest: HeartRateMeasurement? = nil
    private var zone: Int? = nil
    private var hrv: HRVMetrics? = nil
    private var battery: Int? = nil
    private var hasLiveLine = false
    /// The live line on the screen: its display columns (the cursor is at its end).
    private var drawnColumns = 0
    /// Malformed notifications so far: counted on the live line (stderr says the first of each
    /// kind only).
    private var malformed = 0
    /// Each field's column width so far, by name: a field that has been shown keeps its place
    /// (blank when a frame has no value for it) and never narrows, so that the fields after it
    /// do not jump sideways four times a second.
    private var widths: [String: Int] = [:]
    /// `--ecg`: the trace and the ECG's heart rate.
    private var ecg = ECGTrace()

    init(colour: Bool, width: @escaping () -> Int = TerminalWidth.current, reflows: Bool = false) {
        self.colour = colour
        self.width = width
        self.reflows = reflows
    }

    mutating func render(_ event: MonitorEvent) -> String? {
        switch event.kind {
        case .measurement(let m, let zone):
            latest = m
            self.zone = zone
            history.append((event.time.millisecondsSinceEpoch, Int(m.heartRate)))
            history.removeAll { event.time.millisecondsSinceEpoch - $0.time > 60_000 }
            return redraw()
        case .battery(let percent):
            battery = percent
            return redraw()
        case .hrv(let metrics, _):
            hrv = metrics
            return redraw()
        case .alert(let alert):
            // The bell: a person in the middle of a workout hears it without looking.
            return "\u{07}" + scroll(paint("!! \(WatchText.alert(alert))", warn: true))
        case .summary(let report):
            let lines = WatchText.summary(report, lead: "-- summary: ", width: width())
            return scroll(lines.map { paint($0, dim: true) }.joined(separator: "\n"))
        case .info(let name, let location, let battery, let manufacturer, let model, let notify):
            self.battery = battery ?? self.battery
            let line = WatchText.info(
                address: event.device, name: name, location: location, battery: battery,
                manufacturer: manufacturer, model: model, notify: notify)
            return scroll(line)
        case .status(let state, let detail):
            if state != .connected { latest = nil }
            return scroll(paint("-- \(WatchText.status(state, detail))", dim: true))
        case .error(_, _, let hex) where hex != nil:
            malformed += 1
            return redraw()
        case .relay(let state, let consumer):
            return scroll(paint("-- \(WatchText.relay(state, consumer))", dim: true))
        case .ecg(let frame):
            ecg.add(frame)
            return redraw()
        case .ecgBeat(let beat):
            ecg.add(beat)
            return nil
        case .device, .error, .acc:
            return nil
        }
    }

    mutating func finish() -> String? {
        hasLiveLine ? "\n" : nil
    }

    mutating func suspend() -> String? {
        guard hasLiveLine else { return nil }
        return clear()
    }

    mutating func resume() -> String? { redraw() }

    /// A line printed above the live line, which is then drawn again.
    private mutating func scroll(_ line: String) -> String {
        clear() + line + "\n" + (redraw() ?? "")
    }

    /// Takes the live line off the screen, the cursor left where it started. After the window
    /// narrowed, a terminal that reflows has rewrapped it into several rows: all of them go.
    /// `now`: the width, when the caller has just asked.
    private mutating func clear(width now: Int? = nil) -> String {
        guard hasLiveLine else { return "" }
        hasLiveLine = false
        guard reflows else { return "\r\u{1B}[2K" }
        let rows = TerminalReflow.rowsAbove(columns: drawnColumns, width: now ?? width())
        return TerminalReflow.erase(rowsAbove: rows)
    }

    /// The live line: the fields that fit the terminal's width, the least needed left off
    /// first, so that it never wraps (a wrapped line leaves a stale row at every redraw).
    private mutating func redraw() -> String? {
        guard let m = latest else { return nil }
        let terminalWidth = width()
        let clear = clear(width: terminalWidth)
        // (name, text or nil for none now, colour code, priority: 0 is always shown, higher goes
        // first)
        var fields: [(name: String, text: String?, code: String?, drop: Int)] = [
            ("bpm", "♥ \(m.heartRate) bpm", Self.zoneColour(zone), 0),
            ("zone", zone.map { "zone \($0)" }, nil, 1),
        ]
        switch m.sensorContact {
        case .detected: fields.append(("contact", "contact ✓", nil, 5))
        case .notDetected: fields.append(("contact", "no contact", "33", 1))
        case .unsupported: fields.append(("contact", nil, nil, 5))
        }
        fields.append(
            (
                "rr",
                m.rrIntervals.isEmpty
                    ? nil
                    : "RR "
                        + m.rrIntervals.map { String(Int($0.milliseconds.rounded())) }.joined(separator: " ")
                        + " ms", nil, 6
            ))
        fields.append(("energy", m.energyExpended.map { "\($0) kJ" }, nil, 8))
        fields.append(
            (
                "hrv",
                hrv.flatMap { hrv in
                    hrv.rmssd.map {
                        "RMSSD \(HRVRendering.decimal($0, 0)) ms"
                            + (hrv.alpha1.map { " α1 \(HRVRendering.decimal($0, 2))" } ?? "")
                    }
                }, nil, 4
            ))
        fields.append(("ecg", ecg.text, nil, 4))
        let now = history.last?.time ?? 0
        fields.append(("sparkline", Sparkline.lastMinute(history, now: now), nil, 3))
        fields.append(("battery", battery.map { "battery \($0) %" }, (battery ?? 100) <= 15 ? "33" : nil, 2))
        fields.append(
            ("malformed", malformed > 0 ? "\(malformed) bad frame\(malformed == 1 ? "" : "s")" : nil, "33", 1)
        )
        var parts: [(text: String, code: String?, drop: Int)] = []
        for field in fields {
            guard field.text != nil || widths[field.name] != nil else { continue }
            let text = field.text ?? ""
            let width = max(widths[field.name] ?? 0, TerminalText.columns(text))
            widths[field.name] = width
            parts.append((TerminalText.padded(text, columns: width), field.code, field.drop))
        }
        // The last field needs no padding after it.
        if let last = parts.indices.last {
            parts[last].text = String(parts[last].text.reversed().drop { $0 == " " }.reversed())
        }
        // The last column stays free: a character written there leaves some terminals waiting to
        // wrap at the next one.
        let limit = terminalWidth - 1
        func columns() -> Int {
            parts.map { TerminalText.columns($0.text) }.reduce(0, +) + 2 * (parts.count - 1)
        }
        while parts.count > 1, columns() > limit,
            let worst = parts.indices.max(by: { parts[$0].drop < parts[$1].drop })
        {
            parts.remove(at: worst)
        }
        // The BPM alone, in a window narrower than it: cut to the width too.
        if parts.count == 1, columns() > limit {
            parts[0].text = TerminalText.cut(parts[0].text, columns: max(limit, 1))
        }
        hasLiveLine = true
        drawnColumns = columns()
        return (clear.isEmpty ? "\r\u{1B}[2K" : clear)
            + parts.map { part in part.code.map { paint(part.text, code: $0) } ?? part.text }
            .joined(separator: "  ")
    }

    private func paint(_ text: String, code: String? = nil, dim: Bool = false, warn: Bool = false) -> String {
        guard colour else { return text }
        let code = code ?? (warn ? "33" : dim ? "2" : "0")
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    /// The BPM's colour: bold red without zones (as before); by zone with them, from grey below
    /// zone 1 through blue, cyan, green and yellow to red in zone 5 and above.
    static func zoneColour(_ zone: Int?) -> String {
        guard let zone else { return "1;31" }
        let colours = ["1;90", "1;34", "1;36", "1;32", "1;33", "1;31"]
        return colours[min(max(zone, 0), colours.count - 1)]
    }
}
