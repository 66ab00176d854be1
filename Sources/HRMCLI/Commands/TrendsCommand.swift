public import ArgumentParser
import Monitor
import SessionLibrary

/// `hrm trends`: one strap's resting heart rate, HRV, zones and time recorded per day or week,
/// from the session library's index.
public struct TrendsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "trends",
        abstract: "Show resting heart rate, HRV and time in zones per day or week.",
        discussion: """
            One strap's figures over the last --days (30 by default, today included, UTC), per \
            day or per ISO week (--by week, Monday to Sunday, UTC): its resting heart rate (the \
            lowest mean over 5 minutes), RMSSD and ln RMSSD, DFA alpha1 of the sessions that have \
            it, minutes in each zone (of recordings made with zones) and the time it was \
            recorded. A day's resting heart rate is the lowest of its sessions', its RMSSD and \
            alpha1 the mean of its sessions' and its ln RMSSD the mean of their logs; a week's \
            figures are the means of its days', its times the sums.

            On a terminal, a row per figure: a sparkline over the period (· for a day or week \
            without a value), the latest value and the range. --json prints one object per day \
            or week, null where there is no value; --csv a header and a row per day or week.

            The figures come from the session library's index, brought up to date first as hrm \
            sessions does (only new or changed recordings are read). --device picks the strap by \
            its address or a part of its name; without it, the strap recorded longest over the \
            period (stderr says which when there are others). With no recordings, or none in the \
            period, stderr says so.

            Exit status: 0; 64 for usage errors (a --device that matches no strap, or several); \
            66 when the folder cannot be read.
            """
    )

    /// `--by`'s values.
    public enum Grouping: String, ArgumentChoice, Sendable {
        case day, week
    }

    @Option(help: ArgumentHelp("A figure per day or per ISO week (UTC).", valueName: "day|week"))
    public var by: Grouping = .day

    @Option(help: ArgumentHelp("The last N days, today included.", valueName: "N"))
    public var days = 30

    @Option(
        help: ArgumentHelp("The strap: its address, or a part of its name.", valueName: "address"))
    public var device: String?

    @Flag(help: "Print one JSON object per day or week.") public var json = false

    @Flag(help: "Print CSV: a header, then a row per day or week.") public var csv = false

    public init() {}

    public func validate() throws {
        if json, csv { throw ValidationError("--json and --csv cannot be used together") }
        guard (1...36_600).contains(days) else { throw ValidationError("--days takes 1 to 36600") }
    }

    public func run() throws {
        StandardOutput.prepare()
        let today = Trends.day(ofMilliseconds: Timestamp.now().millisecondsSinceEpoch)
        let (folder, found) = try SessionsCommand.libraryEntries(command: "hrm trends", reindex: false)
        let report: TrendsReport
        switch TrendsReport.make(
            found ?? [], folder: folder.path, days: days, today: today, by: by == .day ? .day : .week,
            device: device, say: { StandardOutput.diagnostic("hrm trends: " + $0) })
        {
        case .report(let made):
            report = made
        case .nothing(let message):
            StandardOutput.diagnostic("hrm trends: " + message)
            return
        case .unknownDevice(let message):
            StandardOutput.diagnostic("hrm trends: " + message)
            throw ExitCode(64)
        }
        let (strap, periods, zones) = (report.strap, report.periods, report.zones)
        let output = LineWriter()
        if json {
            for period in periods {
                output.line(TrendsOutput.jsonLine(period, device: strap.device, zones: zones))
            }
        } else if csv {
            output.line(TrendsOutput.csvHeader(zones: zones))
            for period in periods {
                output.line(TrendsOutput.csvRow(period, device: strap.device, zones: zones))
            }
        } else {
            let chart = TrendsChart.lines(periods, zones: zones, columns: TerminalWidth.current())
            let unit = by == .day ? "day" : "week"
            let span =
                by == .day
                ? "\(days) day\(days == 1 ? "" : "s")"
                : "\(periods.count) week\(periods.count == 1 ? "" : "s")"
            // A year by day does not fit a terminal: each block is then the mean of several.
            let blocks = chart.perBlock > 1 ? " (a block is \(chart.perBlock) \(unit)s)" : ""
            output.line(
                "\(StrapChoice.label(strap)): \(span) to \(Trends.date(today)), "
                    + "\(report.sessions) session\(report.sessions == 1 ? "" : "s")\(blocks)")
            for line in chart.lines { output.line(line) }
        }
        output.flush()
    }
}
