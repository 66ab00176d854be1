import HRV
import HeartRate

/// How `watch` writes events: one renderer per output mode. Each returns the text to write to
/// stdout for an event (nil for nothing); diagnostics go to stderr separately.
protocol EventRenderer {
    /// Text to write before any event (a CSV header), if any.
    var header: String? { get }
    /// The stdout text for `event`, newline included; nil when this mode does not show it.
    mutating func render(_ event: MonitorEvent) -> String?
    /// Text to write when the run ends (restores a live display), if any.
    mutating func finish() -> String?
    /// Before a line on stderr: what takes the live display off the screen, if there is one.
    mutating func suspend() -> String?
    /// After it: what draws the live display again.
    mutating func resume() -> String?
}

extension EventRenderer {
    var header: String? { nil }
    mutating func finish() -> String? { nil }
    mutating func suspend() -> String? { nil }
    mutating func resume() -> String? { nil }
}

/// `--json`: the JSON-lines contract, every event.
struct JSONLinesRenderer: EventRenderer {
    mutating func render(_ event: MonitorEvent) -> String? {
        MonitorEventJSON.line(event) + "\n"
    }
}

/// `--csv`: a header with the first row (a run that fails before any measurement prints no
/// header: nothing that looks like an empty table), then measurements only.
struct CSVRenderer: EventRenderer {
    private var headed = false

    mutating func render(_ event: MonitorEvent) -> String? {
        guard let row = MeasurementCSV.row(event) else { return nil }
        defer { headed = true }
        return (headed ? "" : MeasurementCSV.header + "\n") + row + "\n"
    }
}

/// Plain text, one line per event: what `watch` prints into a pipe or a file.
struct TextLinesRenderer: EventRenderer {
    /// With several straps, each measurement, HRV, alert and battery line starts with its strap's
    /// address.
    var namesDevice = false

    mutating func render(_ event: MonitorEvent) -> String? {
        let clock = event.time.localClock + (namesDevice ? event.device.map { "  " + $0 } ?? "" : "")
        switch event.kind {
        case .measurement(let m, let zone):
            return "\(clock)  \(MeasurementRendering.text(m))\(zone.map { "  zone \($0)" } ?? "")\n"
        case .hrv(let metrics):
            return "\(clock)  HRV  \(HRVRendering.text(metrics))\n"
        case .alert(let alert):
            return "\(clock)  !! \(WatchText.alert(alert))\n"
        case .summary(let report):
            return "\(clock)  -- summary\(event.device.map { " for \($0)" } ?? ""): \(report.text)\n"
        case .info(let name, let location, let battery, let manufacturer, let model):
            return "\(clock)  "
                + WatchText.info(
                    address: event.device, name: name, location: location, battery: battery,
                    manufacturer: manufacturer, model: model) + "\n"
        case .status(let state, let detail):
            return "\(clock)  -- \(WatchText.status(state, detail))\n"
        case .battery(let percent):
            return "\(clock)  battery \(percent) %\n"
        case .device(let name, let rssi, _, _):
            let shown = name.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) } ?? "(no name)"
            return "\(clock)  found \(event.device ?? "?") \(shown) \(rssi.map { "\($0) dBm" } ?? "")\n"
        case .error:
            return nil  // on stderr
        }
    }
}

/// On a terminal: info and status lines scroll, and one live line at the bottom is redrawn in
/// place with the heart rate, contact, the latest RR intervals, a sparkline of the last minute
/// and the battery.
struct LiveRenderer: EventRenderer {
    let colour: Bool
    /// The terminal's width, asked at each draw: a resized window (SIGWINCH) is followed.
    let width: () -> Int
    private var history: [(time: Int64, bpm: Int)] = []
    private var latest: HeartRateMeasurement? = nil
    private var zone: Int? = nil
    private var hrv: HRVMetrics? = nil
    private var battery: Int? = nil
    private var hasLiveLine = false

    init(colour: Bool, width: @escaping () -> Int = TerminalWidth.current) {
        self.colour = colour
        self.width = width
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
        case .hrv(let metrics):
            hrv = metrics
            return redraw()
        case .alert(let alert):
            // The bell: a person in the middle of a workout hears it without looking.
            return "\u{07}" + scroll(paint("!! \(WatchText.alert(alert))", warn: true))
        case .summary(let report):
            return scroll(paint("-- summary: \(report.text)", dim: true))
        case .info(let name, let location, let battery, let manufacturer, let model):
            self.battery = battery ?? self.battery
            let line = WatchText.info(
                address: event.device, name: name, location: location, battery: battery,
                manufacturer: manufacturer, model: model)
            return scroll(line)
        case .status(let state, let detail):
            if state != .connected { latest = nil }
            return scroll(paint("-- \(WatchText.status(state, detail))", dim: true))
        case .device, .error:
            return nil
        }
    }

    mutating func finish() -> String? {
        hasLiveLine ? "\n" : nil
    }

    mutating func suspend() -> String? {
        guard hasLiveLine else { return nil }
        hasLiveLine = false
        return "\r\u{1B}[2K"
    }

    mutating func resume() -> String? { redraw() }

    /// A line printed above the live line, which is then drawn again.
    private mutating func scroll(_ line: String) -> String {
        let clear = hasLiveLine ? "\r\u{1B}[2K" : ""
        hasLiveLine = false
        return clear + line + "\n" + (redraw() ?? "")
    }

    /// The live line: the fields that fit the terminal's width, the least needed left off
    /// first, so that it never wraps (a wrapped line leaves a stale row at every redraw).
    private mutating func redraw() -> String? {
        guard let m = latest else { return nil }
        // (text, colour code, priority: 0 is always shown, higher goes first)
        var parts: [(text: String, code: String?, drop: Int)] = [
            ("♥ \(m.heartRate) bpm", Self.zoneColour(zone), 0)
        ]
        if let zone { parts.append(("zone \(zone)", nil, 1)) }
        switch m.sensorContact {
        case .detected: parts.append(("contact ✓", nil, 5))
        case .notDetected: parts.append(("no contact", "33", 1))
        case .unsupported: break
        }
        if !m.rrIntervals.isEmpty {
            parts.append(
                (
                    "RR "
                        + m.rrIntervals.map { String(Int($0.milliseconds.rounded())) }.joined(separator: " ")
                        + " ms", nil, 6
                ))
        }
        if let energy = m.energyExpended { parts.append(("\(energy) kJ", nil, 8)) }
        if let hrv, let rmssd = hrv.rmssd {
            parts.append(
                (
                    "RMSSD \(HRVRendering.decimal(rmssd, 0)) ms"
                        + (hrv.alpha1.map { " α1 \(HRVRendering.decimal($0, 2))" } ?? ""), nil, 4
                ))
        }
        let now = history.last?.time ?? 0
        parts.append((Sparkline.lastMinute(history, now: now), nil, 3))
        if let battery { parts.append(("battery \(battery) %", battery <= 15 ? "33" : nil, 2)) }
        let limit = width() - 1
        while parts.count > 1, parts.map({ $0.text.count }).reduce(0, +) + 2 * (parts.count - 1) > limit,
            let worst = parts.indices.max(by: { parts[$0].drop < parts[$1].drop })
        {
            parts.remove(at: worst)
        }
        hasLiveLine = true
        return "\r\u{1B}[2K"
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

/// Watch's lines for people. Names, makers, models and status details come from the strap or from
/// bluetoothd, so they are printed through `TerminalText` (escaped, capped); JSON carries them
/// exactly.
enum WatchText {
    /// `Polar H10 (D2:4B:7E:10:20:30): chest, battery 87 %, Polar Electro Oy H10`
    static func info(
        address: String?, name: String?, location: BodySensorLocation?, battery: Int?, manufacturer: String?,
        model: String?
    ) -> String {
        var facts: [String] = []
        if let location { facts.append("worn on the \(location.text)") }
        if let battery { facts.append("battery \(battery) %") }
        let maker = [manufacturer, model].compactMap { $0 }.map(shown).joined(separator: " ")
        if !maker.isEmpty { facts.append(maker) }
        let who = "\(name.map(shown) ?? "(no name)") (\(address ?? "?"))"
        return facts.isEmpty ? who : "\(who): \(facts.joined(separator: ", "))"
    }

    /// `heart rate above 160 bpm: 163 bpm`
    static func alert(_ alert: HeartRateAlert) -> String {
        "heart rate \(alert.direction.rawValue) \(alert.bound) bpm: \(alert.bpm) bpm"
    }

    /// `disconnected: le-connection-abort-by-local; retrying in 0.5 seconds`
    static func status(_ state: MonitorEvent.State, _ detail: String?) -> String {
        guard let detail else { return state.rawValue }
        return "\(state.rawValue): \(TerminalText.sanitised(detail, limit: TerminalText.messageLimit))"
    }

    private static func shown(_ text: String) -> String {
        TerminalText.sanitised(text, limit: TerminalText.nameLimit)
    }
}
