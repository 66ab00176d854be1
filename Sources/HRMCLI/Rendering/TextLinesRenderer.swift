import HRV

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
