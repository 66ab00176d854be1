import Monitor
import SessionLibrary

/// `hrm sessions --csv`: a header, then a row per session (RFC 4180: a field with a comma, a
/// quote or a line break is quoted). The strap figures are the first strap's, as the text line
/// shows it.
enum SessionsCSV {
    static let header =
        "start,duration_s,connected_s,device,name,straps,measurements,min_bpm,avg_bpm,max_bpm,resting_bpm,beats,artefacts,rmssd_ms,sdnn_ms,alpha1,path"

    static func row(_ summary: RecordingSummary, path: String) -> String {
        let strap = summary.straps.first { $0.address == summary.device } ?? summary.straps.first
        let hrv = strap?.hrv
        let fields: [String?] = [
            Timestamp(millisecondsSinceEpoch: summary.start).description, number(summary.durationSeconds),
            number(summary.connectedSeconds), summary.device, summary.name, String(summary.devices.count),
            String(summary.measurements), strap?.minimumBPM.map(String.init),
            summary.averageBPM.map(String.init),
            summary.maximumBPM.map(String.init), strap?.restingBPM.map { number($0) },
            hrv.map { String($0.beats) },
            hrv.map { String($0.artefacts) }, hrv?.rmssd.map { number($0) }, hrv?.sdnn.map { number($0) },
            hrv?.alpha1.map { number($0, places: 3) }, path,
        ]
        return fields.map { quoted($0 ?? "") }.joined(separator: ",")
    }

    /// A recording of a newer hrm's format: its start and path, the rest empty.
    static func newerFormatRow(format: Int, start: Int64?, path: String) -> String {
        var fields = Array(repeating: "", count: 17)
        fields[0] = start.map { Timestamp(millisecondsSinceEpoch: $0).description } ?? ""
        fields[16] = quoted(path)
        return fields.joined(separator: ",")
    }

    /// To `places` decimals, without trailing zeros (`3600`, `52.4`).
    static func number(_ value: Double, places: Int = 2) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded(), rounded.magnitude < 1e15 { return String(Int64(rounded)) }
        return String(rounded)
    }

    static func quoted(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
            return field
        }
        return "\"" + field.replacing("\"", with: "\"\"") + "\""
    }
}
