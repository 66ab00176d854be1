package import HRV

/// One strap's session in figures: the `summary` event before `stopped`.
package struct SessionReport: Sendable {
    /// Time with a link to the strap, in seconds.
    package var connectedSeconds = 0.0
    package var measurements = 0
    /// Over measurements with a heart rate above 0 (a strap without skin contact may send 0).
    package var minimumBPM: Int? = nil
    package var averageBPM: Double? = nil
    package var maximumBPM: Int? = nil
    /// Seconds in each zone, index 0 below zone 1; nil when no zones are set.
    package var zoneSeconds: [Double]? = nil
    /// HRV over every beat of the session; nil when HRV is off.
    package var hrv: HRVMetrics? = nil

    /// `connected_s`, `measurements`, `min_bpm`, `avg_bpm`, `max_bpm`, `zone_s`, then the session's
    /// `beats`, `artefacts`, `rmssd_ms`, `alpha1` (null when HRV is off).
    package func addFields(to json: inout JSONLine) {
        json.add("connected_s", Self.tenths(connectedSeconds))
        json.add("measurements", measurements)
        json.add("min_bpm", minimumBPM)
        json.add("avg_bpm", HRVRendering.rounded(averageBPM))
        json.add("max_bpm", maximumBPM)
        if let zoneSeconds {
            json.add("zone_s", zoneSeconds.map(Self.tenths))
        } else {
            json.add("zone_s", nil as Int?)
        }
        json.add("beats", hrv?.beats)
        json.add("artefacts", hrv?.artefacts)
        json.add("rmssd_ms", HRVRendering.rounded(hrv?.rmssd))
        json.add("alpha1", HRVRendering.rounded(hrv?.alpha1))
    }

    /// `connected 12:04, 62/71/84 bpm (min/avg/max), zones 0:10 1:20 ..., RMSSD 45.2 ms, alpha1 0.85, 2 artefacts corrected`
    package var text: String { groups.joined(separator: ", ") }

    /// `text` in the groups a narrow terminal shows a line each: the heart rate, the zones, HRV.
    package var groups: [String] {
        var groups: [String] = []
        var parts = ["connected \(Self.clock(connectedSeconds))"]
        if let minimumBPM, let averageBPM, let maximumBPM {
            parts.append("\(minimumBPM)/\(Int(averageBPM.rounded()))/\(maximumBPM) bpm min/avg/max")
        }
        groups.append(parts.joined(separator: ", "))
        parts = []
        if let zoneSeconds {
            let zones = zoneSeconds.enumerated().dropFirst().map { "Z\($0.offset) \(Self.clock($0.element))" }
            let below = zoneSeconds.first.map { $0 >= 0.5 ? ["below Z1 \(Self.clock($0))"] : [] } ?? []
            groups.append("time in zones: " + (below + zones).joined(separator: ", "))
        }
        if let hrv {
            if let rmssd = hrv.rmssd { parts.append("RMSSD \(HRVRendering.decimal(rmssd, 1)) ms") }
            if let alpha1 = hrv.alpha1 { parts.append("alpha1 \(HRVRendering.decimal(alpha1, 2))") }
            parts.append("\(hrv.artefacts) artefact\(hrv.artefacts == 1 ? "" : "s") corrected")
            groups.append(parts.joined(separator: ", "))
        }
        return groups
    }

    private static func tenths(_ seconds: Double) -> Double {
        (seconds * 10).rounded() / 10
    }

    /// `0:42`, `12:04`, `1:02:03`.
    package static func clock(_ seconds: Double) -> String {
        let total = Int(max(seconds, 0).rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }
}
