import Monitor
import Outputs
import SessionLibrary

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
