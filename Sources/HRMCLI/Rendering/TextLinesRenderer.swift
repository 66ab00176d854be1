import HRV
import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#endif

/// Plain text, one line per event: what `watch` prints into a pipe or a file.
struct TextLinesRenderer: EventRenderer {
    /// With several straps, each measurement, HRV, alert and battery line starts with its strap's
    /// address.
    var namesDevice = false
    /// The terminal's width when stdout is one (TERM=dumb): a summary is broken into lines
    /// rather than wrapped mid-word; nil into a pipe, where a line is a line.
    var width: () -> Int? = { isatty(STDOUT_FILENO) == 1 ? TerminalWidth.current() : nil }

    mutating func render(_ event: MonitorEvent) -> String? {
        let clock = event.time.localClock + (namesDevice ? event.device.map { "  " + $0 } ?? "" : "")
        switch event.kind {
        case .measurement(let m, let zone):
            return "\(clock)  \(MeasurementRendering.text(m))\(zone.map { "  zone \($0)" } ?? "")\n"
        case .hrv(let metrics, _):
            return "\(clock)  HRV  \(HRVRendering.text(metrics))\n"
        case .alert(let alert):
            return "\(clock)  !! \(WatchText.alert(alert))\n"
        case .summary(let report):
            // With several straps the line starts with the strap's address already.
            let lead = "-- summary\(namesDevice ? "" : event.device.map { " for \($0)" } ?? ""): "
            return WatchText.summary(report, lead: lead, indent: clock.count + 2, width: width())
                .map { "\(clock)  \($0)\n" }.joined()
        case .info(let name, let location, let battery, let manufacturer, let model, let notify):
            return "\(clock)  "
                + WatchText.info(
                    address: namesDevice ? nil : event.device, name: name, location: location,
                    battery: battery,
                    manufacturer: manufacturer, model: model, notify: notify) + "\n"
        case .status(let state, let detail):
            return "\(clock)  -- \(WatchText.status(state, detail))\n"
        case .battery(let percent):
            return "\(clock)  battery \(percent) %\n"
        case .device(let name, let rssi, _, _):
            let shown = name.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) } ?? "(no name)"
            return "\(clock)  found \(event.device ?? "?") \(shown) \(rssi.map { "\($0) dBm" } ?? "")\n"
        case .relay(let state, let consumer):
            return "\(clock)  -- \(WatchText.relay(state, consumer))\n"
        case .error:
            return nil  // on stderr
        case .ecg, .acc, .ecgBeat:
            return nil  // samples are for --json and recordings
        }
    }
}
