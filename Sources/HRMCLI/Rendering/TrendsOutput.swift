import Monitor
import SessionLibrary

/// `hrm trends`' output: a JSON object or a CSV row per period, or a chart of a row per figure.
/// Figures are rounded here (bpm to 0.1, RMSSD to 0.01 ms, ln RMSSD and alpha1 to 0.001,
/// minutes to 0.1); a period without the figure gives null (an empty CSV field).
enum TrendsOutput {
    /// The zones given columns: 0 (below zone 1) to 5, and any higher zone a recording has.
    static func zones(of periods: [Trends.Period]) -> [Int] {
        let highest = periods.compactMap { $0.zoneSeconds?.keys.max() }.max() ?? 5
        return Array(0...max(highest, 5))
    }

    static func jsonLine(_ period: Trends.Period, device: String, zones: [Int]) -> String {
        var line = JSONLine(type: "trend")
        line.add("period", period.label)
        line.add("start", Trends.date(period.firstDay))
        line.add("days", period.days)
        line.add("device", device)
        line.add("sessions", period.sessions)
        line.add("recorded_min", round(period.recordedSeconds / 60, 1))
        line.add("resting_bpm", period.restingBPM.map { round($0, 1) })
        line.add("rmssd_ms", period.rmssd.map { round($0, 2) })
        line.add("ln_rmssd", period.lnRMSSD.map { round($0, 3) })
        line.add("alpha1", period.alpha1.map { round($0, 3) })
        for zone in zones {
            line.add(
                JSONLine.Key("zone\(zone)_min"),
                period.zoneSeconds.map { round(Double($0[zone] ?? 0) / 60, 1) })
        }
        return line.line
    }

    static func csvHeader(zones: [Int]) -> String {
        ([
            "period", "start", "days", "device", "sessions", "recorded_min", "resting_bpm", "rmssd_ms",
            "ln_rmssd", "alpha1",
        ]
            + zones.map { "zone\($0)_min" }).joined(separator: ",")
    }

    static func csvRow(_ period: Trends.Period, device: String, zones: [Int]) -> String {
        let fields: [String?] = [
            period.label, Trends.date(period.firstDay), String(period.days), device, String(period.sessions),
            SessionsCSV.number(period.recordedSeconds / 60, places: 1),
            period.restingBPM.map { SessionsCSV.number($0, places: 1) },
            period.rmssd.map { SessionsCSV.number($0, places: 2) },
            period.lnRMSSD.map { SessionsCSV.number($0, places: 3) },
            period.alpha1.map { SessionsCSV.number($0, places: 3) },
        ]
        let zoneFields = zones.map { zone in
            period.zoneSeconds.map { SessionsCSV.number(Double($0[zone] ?? 0) / 60, places: 1) }
        }
        return (fields + zoneFields).map { SessionsCSV.quoted($0 ?? "") }.joined(separator: ",")
    }

    static func round(_ value: Double, _ places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }
}

/// The terminal's view of `hrm trends`: a row per figure, its name, a sparkline over the
/// periods (a `·` where a period has no value), the latest value and the range.
///
///     resting HR  ▃▄▅·▃▂▁▁  latest 52.1 bpm  range 50.3-55.0
enum TrendsChart {
    static let gap: Character = "·"

    /// One figure: its name, unit, decimals and a value per period (nil: none).
    struct Row {
        var name: String
        var unit: String
        var places: Int
        var values: [Double?]
    }

    static func rows(_ periods: [Trends.Period], zones: [Int]) -> [Row] {
        // The index is a file anyone can edit: a value that is not a number is no value.
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        var rows = [
            Row(name: "resting HR", unit: "bpm", places: 1, values: periods.map { finite($0.restingBPM) }),
            Row(name: "RMSSD", unit: "ms", places: 1, values: periods.map { finite($0.rmssd) }),
            Row(name: "ln RMSSD", unit: "", places: 2, values: periods.map { finite($0.lnRMSSD) }),
            Row(name: "alpha1", unit: "", places: 2, values: periods.map { finite($0.alpha1) }),
        ]
        for zone in zones {
            let values = periods.map { period in finite(period.zoneSeconds.map { Double($0[zone] ?? 0) / 60 })
            }
            // A zone no session reached is not drawn: a flat row of nothing says nothing.
            guard values.contains(where: { ($0 ?? 0) > 0 }) else { continue }
            rows.append(Row(name: "zone \(zone)", unit: "min", places: 0, values: values))
        }
        rows.append(
            Row(
                name: "recorded", unit: "min", places: 0,
                values: periods.map { $0.hasData ? finite($0.recordedSeconds / 60) : nil }))
        return rows
    }

    /// The chart's lines for a terminal `columns` wide: the sparkline is one cell per period,
    /// or, when the periods do not fit, one per run of `perBlock` consecutive periods (their mean).
    static func lines(_ periods: [Trends.Period], zones: [Int], columns: Int) -> (
        lines: [String], perBlock: Int
    ) {
        let rows = rows(periods, zones: zones)
        let nameWidth = rows.map(\.name.count).max() ?? 0
        let tails = rows.map(tail)
        let tailWidth = tails.map(\.count).max() ?? 0
        let room = max(columns - nameWidth - tailWidth - 4, 8)
        let perCell = max((periods.count + room - 1) / room, 1)
        let lines = zip(rows, tails).map { row, tail in
            let name = row.name + String(repeating: " ", count: nameWidth - row.name.count)
            var resolution = 1.0
            for _ in 0..<row.places { resolution /= 10 }
            return name + "  " + sparkline(cells(row.values, perCell: perCell), resolution: resolution) + "  "
                + tail
        }
        return (lines, perCell)
    }

    /// `latest 52.1 bpm  range 50.3-55.0`, or `no data`.
    static func tail(_ row: Row) -> String {
        let present = row.values.compactMap { $0 }
        guard let latest = present.last, let low = present.min(), let high = present.max() else {
            return "no data"
        }
        let unit = row.unit.isEmpty ? "" : " " + row.unit
        return
            "latest \(text(latest, row.places))\(unit)  range \(text(low, row.places))-\(text(high, row.places))"
    }

    static func cells(_ values: [Double?], perCell: Int) -> [Double?] {
        guard perCell > 1 else { return values }
        return stride(from: 0, to: values.count, by: perCell).map { start in
            let present = values[start..<min(start + perCell, values.count)].compactMap { $0 }
            return present.isEmpty ? nil : present.reduce(0, +) / Double(present.count)
        }
    }

    /// The values on the scale of their own range, `·` for nil; a series that spans less than
    /// `resolution` (the figure's last decimal shown) is flat, in the middle: 59.99 and 60.01
    /// minutes are both "60" in the range, and not drawn as the bottom and the top.
    static func sparkline(_ values: [Double?], resolution: Double = 0) -> String {
        let present = values.compactMap { $0 }
        let low = present.min() ?? 0
        let high = present.max() ?? 0
        let blocks = Sparkline.blocks
        return String(
            values.map { value -> Character in
                guard let value else { return gap }
                // A span past Double's range (an edited index) is drawn flat rather than trapped.
                guard high - low >= resolution, high > low, (high - low).isFinite else {
                    return blocks[blocks.count / 2 - 1]
                }
                let scaled = ((value - low) / (high - low) * Double(blocks.count - 1)).rounded()
                guard scaled.isFinite else { return blocks[blocks.count / 2 - 1] }
                let level = Int(scaled)
                return blocks[min(max(level, 0), blocks.count - 1)]
            })
    }

    static func text(_ value: Double, _ places: Int) -> String {
        let rounded = TrendsOutput.round(value, places)
        guard rounded.isFinite, rounded.magnitude < 1e15 else { return String(rounded) }
        if places == 0 { return String(Int64(rounded)) }
        var text = String(rounded)
        // Fixed decimals: 52.0, not 52; Double prints at most as many as it has.
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if decimals < places { text += String(repeating: "0", count: places - decimals) }
        } else {
            text += "." + String(repeating: "0", count: places)
        }
        return text
    }
}
