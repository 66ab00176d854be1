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
    public enum Grouping: String, CaseIterable, ExpressibleByArgument, Sendable {
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
        guard let entries = found, !entries.isEmpty else {
            StandardOutput.diagnostic(
                "hrm trends: no recordings in \(folder.path) yet (hrm record makes them)")
            return
        }
        let first = today - days + 1
        var sessions: [(day: Int, summary: RecordingSummary)] = []
        for entry in entries {
            switch entry.kind {
            case .unreadable(let message), .unopenable(let message):
                StandardOutput.diagnostic("hrm trends: \(message): left out")
            case .newerFormat: continue
            case .session(let summary, _):
                sessions.append((Trends.day(ofMilliseconds: summary.start), summary))
            }
        }
        let period = days == 1 ? "today" : "in the last \(days) days"
        let inPeriod = sessions.filter { $0.day >= first && $0.day <= today }
        guard let strap = try strap(among: sessions.map(\.summary), inPeriod: inPeriod.map(\.summary)) else {
            StandardOutput.diagnostic("hrm trends: no sessions \(period) in \(folder.path)")
            return
        }
        let own = inPeriod.flatMap { session in
            session.summary.straps.filter { $0.address == strap.device }.map {
                Trends.Session(day: session.day, figures: $0)
            }
        }
        guard !own.isEmpty else {
            StandardOutput.diagnostic(
                "hrm trends: no sessions of \(StrapChoice.label(strap)) \(period)")
            return
        }
        let periods = Trends.periods(of: own, days: days, today: today, by: by == .day ? .day : .week)
        let zones = TrendsOutput.zones(of: periods)
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
                    + "\(own.count) session\(own.count == 1 ? "" : "s")\(blocks)")
            for line in chart.lines { output.line(line) }
        }
        output.flush()
    }

    /// The strap `--device` names among every strap of the library, or the one connected longest
    /// over the period; nil when the period has no session. Exit 64 for a `--device` that names
    /// none or several.
    private func strap(among all: [RecordingSummary], inPeriod: [RecordingSummary]) throws -> StrapChoice
        .Strap?
    {
        var straps: [StrapChoice.Strap] = []
        var seen: Set<String> = []
        // Newest first: a strap is known by the name it gave last.
        for summary in all {
            for strap in summary.straps where seen.insert(strap.address).inserted {
                straps.append(StrapChoice.Strap(device: strap.address, name: strap.name))
            }
        }
        if let device {
            let outcome = StrapChoice.pick(device, among: straps)
            guard case .found(let strap) = outcome else {
                StandardOutput.diagnostic(
                    "hrm trends: " + StrapChoice.refusal(device, outcome, among: straps, in: "the library"))
                throw ExitCode(64)
            }
            return strap
        }
        var connected: [String: Double] = [:]
        for summary in inPeriod {
            for strap in summary.straps { connected[strap.address, default: 0] += strap.connectedSeconds }
        }
        guard
            let longest = connected.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }),
            let strap = straps.first(where: { $0.device == longest.key })
        else { return nil }
        if connected.count > 1 {
            StandardOutput.diagnostic(
                "hrm trends: \(StrapChoice.label(strap)), the strap recorded longest in the period "
                    + "(\(connected.count) straps; --device picks another)")
        }
        return strap
    }
}
