import SessionLibrary

/// `hrm serve`'s `/trends`: the rows of `hrm trends`' chart (`TrendsChart.rows`, the same figures)
/// as SVG charts drawn here, on the server: a line with a point per period for resting HR, RMSSD,
/// ln RMSSD and alpha1, a bar per period for the minutes in each zone and the time recorded. No
/// script, nothing fetched: the page is the charts. It is well-formed XML (polyglot XHTML), so
/// that any XML reader can check it.
///
/// Each point is a `circle class="point"` and each bar a `rect class="bar"`, one per period with
/// a value, carrying `data-period` and `data-value` (the value as the chart's tail rounds it) and
/// a `title` for the pointer; each chart is a `figure class="chart"` with `data-figure` (the row's
/// name) and `data-kind` (`line` or `bar`).
enum TrendsSVG {
    /// The chart's size in SVG units, and its margins (labels live there).
    static let width = 720.0
    static let height = 150.0
    static let left = 56.0
    static let right = 12.0
    static let top = 12.0
    static let bottom = 26.0

    /// Rows drawn as bars: minutes, which add up.
    static func isBar(_ row: TrendsChart.Row) -> Bool { row.unit == "min" }

    /// The whole page for `report`; `links` are the query strings of the other views offered.
    static func page(_ report: TrendsReport) -> String {
        let rows = TrendsChart.rows(report.periods, zones: report.zones)
        let span =
            report.grouping == .day
            ? "\(report.days) day\(report.days == 1 ? "" : "s")"
            : "\(report.periods.count) week\(report.periods.count == 1 ? "" : "s")"
        let heading =
            "\(StrapChoice.label(report.strap)): \(span) to \(Trends.date(report.today)), "
            + "\(report.sessions) session\(report.sessions == 1 ? "" : "s")"
        var body = "<p class=\"summary\">\(escaped(heading))</p>\n"
        body += navigation(report)
        for row in rows { body += chart(row, report.periods) }
        return document(body)
    }

    /// A page that says why there is nothing to chart.
    static func message(_ text: String) -> String {
        document("<p class=\"summary\">\(escaped(text))</p>\n<nav><a href=\"./\">live page</a></nav>\n")
    }

    static func document(_ body: String) -> String {
        """
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>hrm trends</title>
        <link rel="icon" href="data:,"/>
        <style>
        body { margin: 1.5em auto; max-width: 760px; padding: 0 1em; background: #111; color: #eee;
          font-family: system-ui, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
        h1 { font-size: 1.4em; margin: 0 0 .2em; }
        nav { margin: .4em 0 1em; font-size: .9em; color: #aaa; }
        nav a { color: #8ab4f8; margin-right: .8em; }
        nav a.current { color: #eee; font-weight: 700; text-decoration: none; }
        figure.chart { margin: 0 0 1.2em; }
        figcaption { font-weight: 700; margin-bottom: .2em; }
        figcaption .tail { font-weight: 400; color: #aaa; margin-left: .8em; white-space: pre; }
        svg { display: block; width: 100%; height: auto; }
        .frame { fill: #1b1b1b; stroke: #333; }
        .grid { stroke: #333; stroke-dasharray: 2 3; }
        .line { fill: none; stroke: #ff6b7a; stroke-width: 2; stroke-linejoin: round; }
        .point { fill: #ff6b7a; }
        .bar { fill: #42a5f5; }
        text { fill: #aaa; font-size: 11px; font-family: inherit; }
        .y-label { text-anchor: end; }
        .x-label { text-anchor: middle; }
        .x-label.first { text-anchor: start; }
        .x-label.last { text-anchor: end; }
        .empty { fill: #777; text-anchor: middle; }
        </style></head>
        <body>
        <h1>Trends</h1>
        \(body)</body></html>

        """
    }

    /// Links to the other spans and groupings, and back to the live page.
    static func navigation(_ report: TrendsReport) -> String {
        let device = "&amp;device=" + percentEncoded(report.strap.device)
        var links: [String] = []
        for days in [7, 30, 90, 365] {
            let current = report.days == days && report.grouping == .day
            links.append(
                "<a\(current ? " class=\"current\"" : "") href=\"trends?days=\(days)&amp;by=day\(device)\">\(days) days</a>"
            )
        }
        for (days, label) in [(91, "13 weeks"), (365, "52 weeks")] {
            let current = report.days == days && report.grouping == .week
            links.append(
                "<a\(current ? " class=\"current\"" : "") href=\"trends?days=\(days)&amp;by=week\(device)\">\(label) by week</a>"
            )
        }
        links.append("<a href=\"./\">live page</a>")
        return "<nav>" + links.joined(separator: " ") + "</nav>\n"
    }

    /// One figure's chart: its caption (name, unit, latest and range as `hrm trends` says them)
    /// and the SVG.
    static func chart(_ row: TrendsChart.Row, _ periods: [Trends.Period]) -> String {
        let bar = isBar(row)
        let title = row.name + (row.unit.isEmpty ? "" : " (\(row.unit))")
        var out =
            "<figure class=\"chart\" data-figure=\"\(escaped(row.name))\" data-kind=\"\(bar ? "bar" : "line")\">\n"
        out +=
            "<figcaption>\(escaped(title))<span class=\"tail\">\(escaped(TrendsChart.tail(row)))</span></figcaption>\n"
        out += svg(row, labels: periods.map(\.label), bar: bar)
        return out + "</figure>\n"
    }

    /// The SVG of one row: a frame, the scale's two labels, the first and last periods' labels,
    /// and a point (with the line through them, broken at a period without a value) or a bar
    /// per period with a value.
    static func svg(_ row: TrendsChart.Row, labels: [String], bar: Bool) -> String {
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let count = max(row.values.count, 1)
        let slot = plotWidth / Double(count)
        let present = row.values.compactMap { $0 }.filter(\.isFinite)
        var low = present.min() ?? 0
        var high = present.max() ?? 0
        if bar { low = min(low, 0) }
        var out =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(number(width)) \(number(height))\" "
            + "role=\"img\" aria-label=\"\(escaped(row.name))\">\n"
        out +=
            "<rect class=\"frame\" x=\"\(number(left))\" y=\"\(number(top))\" width=\"\(number(plotWidth))\" height=\"\(number(plotHeight))\"/>\n"
        guard !present.isEmpty else {
            out +=
                "<text class=\"empty\" x=\"\(number(left + plotWidth / 2))\" y=\"\(number(top + plotHeight / 2))\">no data</text>\n"
            return out + "</svg>\n"
        }
        // A flat series sits mid-height; a range too small to tell apart at the row's decimals
        // (or past Double's range) is flat too, as on the terminal.
        var resolution = 1.0
        for _ in 0..<row.places { resolution /= 10 }
        let span = high - low
        let flat = !span.isFinite || span < resolution / 2
        if flat, !bar {
            low -= 1
            high += 1
        }
        func y(_ value: Double) -> Double {
            if flat && !bar { return top + plotHeight / 2 }
            guard high > low else { return top + plotHeight }
            return top + (high - value) / (high - low) * plotHeight
        }
        func x(_ index: Int) -> Double { left + (Double(index) + 0.5) * slot }
        // The scale: the top and bottom values of the range (a flat line: its value).
        let scale = flat && !bar ? [present[0]] : [high, low]
        for value in scale {
            let at = flat && !bar ? top + plotHeight / 2 : y(value)
            out +=
                "<line class=\"grid\" x1=\"\(number(left))\" x2=\"\(number(left + plotWidth))\" y1=\"\(number(at))\" y2=\"\(number(at))\"/>\n"
            out +=
                "<text class=\"y-label\" x=\"\(number(left - 6))\" y=\"\(number(at + 4))\">\(escaped(TrendsChart.text(value, row.places)))</text>\n"
        }
        if let first = labels.first {
            out +=
                "<text class=\"x-label first\" x=\"\(number(left))\" y=\"\(number(height - 8))\">\(escaped(first))</text>\n"
        }
        if labels.count > 1, let last = labels.last {
            out +=
                "<text class=\"x-label last\" x=\"\(number(left + plotWidth))\" y=\"\(number(height - 8))\">\(escaped(last))</text>\n"
        }
        let unit = row.unit.isEmpty ? "" : " " + row.unit
        func tooltip(_ index: Int, _ value: Double) -> (attributes: String, title: String) {
            let label = index < labels.count ? labels[index] : ""
            let shown = TrendsChart.text(value, row.places)
            return (
                " data-period=\"\(escaped(label))\" data-value=\"\(escaped(shown))\"",
                "<title>\(escaped(label)): \(escaped(shown + unit))</title>"
            )
        }
        if bar {
            let width = max(slot * 0.7, 0.5)
            for (index, value) in row.values.enumerated() {
                guard let value, value.isFinite else { continue }
                let top = y(max(value, 0))
                let height = max(y(0) - top, 0)
                let tip = tooltip(index, value)
                out +=
                    "<rect class=\"bar\" x=\"\(number(x(index) - width / 2))\" y=\"\(number(top))\" width=\"\(number(width))\" height=\"\(number(height))\"\(tip.attributes)>\(tip.title)</rect>\n"
            }
            return out + "</svg>\n"
        }
        var path = ""
        var previous = false
        for (index, value) in row.values.enumerated() {
            guard let value, value.isFinite else {
                previous = false
                continue
            }
            path += (previous ? "L" : "M") + number(x(index)) + " " + number(y(value))
            previous = true
        }
        out += "<path class=\"line\" d=\"\(path)\"/>\n"
        let radius = min(3, max(slot / 2.5, 1))
        for (index, value) in row.values.enumerated() {
            guard let value, value.isFinite else { continue }
            let tip = tooltip(index, value)
            out +=
                "<circle class=\"point\" cx=\"\(number(x(index)))\" cy=\"\(number(y(value)))\" r=\"\(number(radius))\"\(tip.attributes)>\(tip.title)</circle>\n"
        }
        return out + "</svg>\n"
    }

    /// A coordinate to 0.01.
    static func number(_ value: Double) -> String {
        TrendsChart.text(value.isFinite ? value : 0, 2)
    }

    /// Text for XML content and attribute values.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // XML 1.0 allows no control characters but tab, newline and return.
                if let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1,
                    scalar.value < 0x20, scalar != "\t", scalar != "\n", scalar != "\r"
                {
                    out += "?"
                } else {
                    out.append(character)
                }
            }
        }
        return out
    }

    /// A strap's address or name in a query string.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "."),
                UInt8(ascii: "~"), UInt8(ascii: ":"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count < 2 ? "0" : "") + hex
            }
        }
        return out
    }
}
