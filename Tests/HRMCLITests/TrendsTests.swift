import Foundation
import HRV
import SessionLibrary
import Testing

@testable import HRMCLI

/// `Trends`' arithmetic on its own: UTC days and ISO weeks against Foundation's calendar, and the
/// grouping of days into weeks.
@Suite struct TrendsTests {
    static func dayNumber(_ text: String) throws -> Int {
        let date = try #require(ISO8601DateFormatter().date(from: text + "T00:00:00Z"))
        return Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    @Test(arguments: [
        ("2026-12-31", "2026-W53"), ("2027-01-01", "2026-W53"), ("2027-01-04", "2027-W01"),
        ("2024-12-30", "2025-W01"), ("2021-01-03", "2020-W53"), ("2026-11-26", "2026-W48"),
        ("1970-01-01", "1970-W01"), ("1969-12-28", "1969-W52"), ("2000-02-29", "2000-W09"),
    ])
    func isoWeeksAreFoundations(date: String, week: String) throws {
        let day = try Self.dayNumber(date)
        #expect(Trends.date(day) == date)
        #expect(Trends.isoWeek(day) == week)
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let parts = calendar.dateComponents(
            [.yearForWeekOfYear, .weekOfYear], from: Date(timeIntervalSince1970: Double(day) * 86_400))
        #expect(String(format: "%04d-W%02d", parts.yearForWeekOfYear ?? 0, parts.weekOfYear ?? 0) == week)
    }

    @Test func everyDayOfFourHundredYearsIsFoundationsDate() throws {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withFullDate]
        for day in stride(from: -50_000, to: 100_000, by: 37) {
            #expect(
                Trends.date(day) == format.string(from: Date(timeIntervalSince1970: Double(day) * 86_400)))
        }
        #expect(Trends.day(ofMilliseconds: -1) == -1)
        #expect(Trends.day(ofMilliseconds: 86_399_999) == 0)
    }

    static func strap(resting: Double?, rmssd: Double?, connected: Double, zones: [Int: Int] = [:])
        -> RecordingSummary.StrapFigures
    {
        RecordingSummary.StrapFigures(
            address: "A", name: nil, measurements: 1, minimumBPM: nil, averageBPM: nil, maximumBPM: nil,
            connectedSeconds: connected,
            hrv: rmssd.map { HRVMetrics(beats: 100, artefacts: 0, rmssd: $0) }, restingBPM: resting,
            zoneSeconds: zones)
    }

    /// A week of two days with data: its figures the means of its days', a day of two sessions
    /// counted once; times and zones summed; the range's first week cut to the days within it.
    @Test func weeksAverageTheirDays() throws {
        let thursday = try Self.dayNumber("2026-11-26")
        let sessions = [
            Trends.Session(
                day: thursday, figures: Self.strap(resting: 50, rmssd: 40, connected: 600, zones: [2: 60])),
            Trends.Session(day: thursday - 1, figures: Self.strap(resting: 54, rmssd: 20, connected: 60)),
            Trends.Session(day: thursday - 1, figures: Self.strap(resting: 58, rmssd: 80, connected: 60)),
            Trends.Session(day: thursday - 7, figures: Self.strap(resting: 60, rmssd: 30, connected: 60)),
        ]
        let weeks = Trends.periods(of: sessions, days: 10, today: thursday, by: .week)
        #expect(weeks.map(\.label) == ["2026-W47", "2026-W48"])
        #expect(weeks.map(\.days) == [6, 4])
        #expect(weeks[0].firstDay == thursday - 9)
        let week = weeks[1]
        #expect(week.sessions == 3)
        #expect(week.restingBPM == 52)  // (50 + min(54, 58)) / 2
        #expect(week.rmssd == 45)  // (40 + (20 + 80) / 2) / 2
        let lnWednesday = (log(20.0) + log(80.0)) / 2
        #expect(abs((week.lnRMSSD ?? 0) - (log(40.0) + lnWednesday) / 2) < 1e-12)
        #expect(week.recordedSeconds == 720)
        #expect(week.zoneSeconds == [2: 60])
        #expect(weeks[0].zoneSeconds == nil)
        #expect(weeks[0].alpha1 == nil)
        let days = Trends.periods(of: sessions, days: 3, today: thursday, by: .day)
        #expect(days.map(\.label) == ["2026-11-24", "2026-11-25", "2026-11-26"])
        #expect(days.map(\.hasData) == [false, true, true])
    }

    /// A sparkline on its own range, `·` for a period without a value, a flat series in the
    /// middle; too many periods for the width are folded into blocks of their mean.
    @Test func theChartScalesFoldsAndMarksGaps() {
        #expect(TrendsChart.sparkline([60, nil, 66, 63, 61.5]) == "▁·█▅▃")
        #expect(TrendsChart.sparkline([5, 5, nil]) == "▄▄·")
        #expect(TrendsChart.sparkline([nil, nil]) == "··")
        #expect(TrendsChart.sparkline([59.99, 60.01, nil], resolution: 1) == "▄▄·")
        #expect(TrendsChart.sparkline([59, 60], resolution: 1) == "▁█")
        #expect(TrendsChart.sparkline([-1e308, 1e308, 0]) == "▄▄▄")
        #expect(TrendsChart.text(1e300, 0) == "1e+300")
        #expect(TrendsChart.cells([1, nil, 3, nil, nil, nil, 10], perCell: 3) == [2, nil, 10])
        let periods = (0..<365).map { day in
            Trends.Period(
                label: Trends.date(day), firstDay: day, days: 1, sessions: day % 2, recordedSeconds: 60,
                restingBPM: day % 2 == 1 ? Double(50 + day % 10) : nil, zoneSeconds: nil)
        }
        let chart = TrendsChart.lines(periods, zones: [0, 1, 2, 3, 4, 5], columns: 80)
        #expect(chart.perBlock > 1)
        #expect(chart.lines.allSatisfy { $0.count <= 80 }, "\(chart.lines)")
        #expect(
            chart.lines.map { String($0.prefix(10)) } == [
                "resting HR", "RMSSD     ", "ln RMSSD  ", "alpha1    ", "recorded  ",
            ])
        #expect(chart.lines[0].hasSuffix("latest 53.0 bpm  range 51.0-59.0"), "\(chart.lines[0])")
        #expect(chart.lines[1].hasSuffix("  no data"), "\(chart.lines[1])")
        #expect(chart.lines[4].hasSuffix("latest 1 min  range 1-1"), "\(chart.lines[4])")
        #expect(TrendsChart.text(52, 1) == "52.0")
        #expect(TrendsChart.text(3.5, 2) == "3.50")
    }
}
