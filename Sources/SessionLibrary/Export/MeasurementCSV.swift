package import Monitor

/// `--csv`: a header, then one row per measurement. Lists are space-separated inside a field.
package enum MeasurementCSV {
    package static let header = "time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format,zone"

    /// The row for a measurement event; nil for every other kind.
    package static func row(_ event: MonitorEvent) -> String? {
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
