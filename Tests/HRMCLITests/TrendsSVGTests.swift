import Foundation
import SessionLibrary
import Testing

@testable import HRMCLI

/// `/trends`' SVG on its own: a well-formed document (xmllint, when the machine has it, reads
/// it as XML), a point per period with a value placed on the row's own scale, a bar per period
/// from zero, gaps left gaps, and text from outside escaped.
@Suite struct TrendsSVGTests {
    /// Four days: resting HR 50, none, 60, 55; zone 1 minutes 10, -, 0, 30.
    static func report(name: String = "Test H10") -> TrendsReport {
        let resting: [Double?] = [50, nil, 60, 55]
        let zone: [[Int: Int]?] = [[1: 600], nil, [1: 0], [1: 1800]]
        let periods = (0..<4).map { index in
            Trends.Period(
                label: Trends.date(20_000 + index), firstDay: 20_000 + index, days: 1,
                sessions: resting[index] == nil ? 0 : 1, recordedSeconds: resting[index] == nil ? 0 : 600,
                restingBPM: resting[index], zoneSeconds: zone[index])
        }
        return TrendsReport(
            strap: StrapChoice.Strap(device: "D2:4B:7E:10:20:30", name: name), sessions: 3, periods: periods,
            zones: TrendsOutput.zones(of: periods), today: 20_003, days: 4, grouping: .day)
    }

    /// The attributes of every `element` with `class` in `chart`'s figure, in order.
    static func marks(_ page: String, figure: String, element: String) -> [[String: String]] {
        guard let start = page.range(of: "data-figure=\"\(figure)\""),
            let end = page.range(of: "</figure>", range: start.upperBound..<page.endIndex)
        else { return [] }
        let chart = page[start.upperBound..<end.lowerBound]
        var found: [[String: String]] = []
        for piece in chart.components(separatedBy: "<\(element) ").dropFirst() {
            var attributes: [String: String] = [:]
            let head = piece.prefix { $0 != ">" }
            let pattern = /([a-z-]+)="([^"]*)"/
            for match in head.matches(of: pattern) { attributes[String(match.1)] = String(match.2) }
            found.append(attributes)
        }
        return found
    }

    @Test func pointsSitOnTheRowsOwnScale() throws {
        let page = TrendsSVG.page(Self.report())
        let points = Self.marks(page, figure: "resting HR", element: "circle")
        try #require(points.count == 3, "a point per day with a value")
        #expect(
            points.map { $0["data-period"] } == [
                Trends.date(20_000), Trends.date(20_002), Trends.date(20_003),
            ])
        #expect(points.map { $0["data-value"] } == ["50.0", "60.0", "55.0"])
        let plotHeight = TrendsSVG.height - TrendsSVG.top - TrendsSVG.bottom
        let ys = points.compactMap { $0["cy"].flatMap(Double.init) }
        // 60 at the top, 50 at the bottom, 55 half-way.
        #expect(ys == [TrendsSVG.top + plotHeight, TrendsSVG.top, TrendsSVG.top + plotHeight / 2])
        // Each in the middle of its day's slot: 4 slots across the plot.
        let slot = (TrendsSVG.width - TrendsSVG.left - TrendsSVG.right) / 4
        let xs = points.compactMap { $0["cx"].flatMap(Double.init) }
        #expect(xs == [0.5, 2.5, 3.5].map { TrendsSVG.left + $0 * slot })
        // The line breaks at the day without a value: two runs.
        let line = try #require(Self.marks(page, figure: "resting HR", element: "path").first?["d"])
        #expect(line.filter { $0 == "M" }.count == 2, "\(line)")
        #expect(line.filter { $0 == "L" }.count == 1, "\(line)")
    }

    @Test func barsRiseFromZero() throws {
        let page = TrendsSVG.page(Self.report())
        let bars = Self.marks(page, figure: "zone 1", element: "rect").filter { $0["class"] == "bar" }
        try #require(bars.count == 3, "a bar per day with zones, 0 minutes included")
        #expect(bars.map { $0["data-value"] } == ["10", "0", "30"])
        let bottom = TrendsSVG.height - TrendsSVG.bottom
        let plotHeight = TrendsSVG.height - TrendsSVG.top - TrendsSVG.bottom
        let heights = bars.compactMap { $0["height"].flatMap(Double.init) }
        let tops = bars.compactMap { $0["y"].flatMap(Double.init) }
        #expect(
            heights.map { ($0 * 100).rounded() / 100 }
                == [plotHeight / 3, 0, plotHeight].map { ($0 * 100).rounded() / 100 })
        for (top, height) in zip(tops, heights) { #expect(abs(top + height - bottom) < 0.02) }
        // The scale's labels: the top and zero.
        let labels = page.components(separatedBy: "data-figure=\"zone 1\"")[1].components(
            separatedBy: "</figure>")[0]
        #expect(labels.contains(">30</text>") && labels.contains(">0</text>"))
    }

    @Test func theDocumentIsWellFormedAndEscapesWhatComesFromOutside() async throws {
        let page = TrendsSVG.page(Self.report(name: "<b>&\"Strap\"</b>\u{1B}"))
        #expect(!page.contains("<b>"))
        // The label escapes the control character (as on a terminal), the page the markup.
        #expect(page.contains("&lt;b&gt;&amp;&quot;Strap&quot;&lt;/b&gt;\\e"))
        #expect(!page.contains("<script"))
        // XML 1.0 has no control characters but tab and line breaks.
        #expect(TrendsSVG.escaped("a\u{1}b\tc") == "a?b\tc")
        let xmllint = URL(fileURLWithPath: "/usr/bin/xmllint")
        guard FileManager.default.isExecutableFile(atPath: xmllint.path) else {
            print("SKIPPED: xmllint is not installed: the page's well-formedness is not checked")
            return
        }
        for document in [page, TrendsSVG.message("no recordings in /x & <y> yet")] {
            let result = try await HRMProcess.run(["--noout", "-"], stdin: document, executable: xmllint)
            #expect(result.status == 0, "\(result.stderr)")
        }
        // Every chart is an SVG element of its own, found by an XML reader.
        let count = try await HRMProcess.run(
            ["--xpath", "count(//*[local-name()='svg'])", "-"], stdin: page, executable: xmllint)
        #expect(
            count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "6",
            "resting HR, RMSSD, ln RMSSD, alpha1, zone 1, recorded: \(count.stdout)")
    }
}
