package import SessionLibrary

/// What `hrm trends` and `hrm serve`'s `/trends` show: one strap's periods over the last days,
/// from the library's entries. The choice of the strap and the words for a library without
/// sessions live here, once for both.
package struct TrendsReport: Sendable {
    /// The strap shown.
    package var strap: StrapChoice.Strap
    /// Its sessions in the period.
    package var sessions: Int
    /// Every day or week of the period, oldest first.
    package var periods: [Trends.Period]
    /// The zones given columns (`TrendsOutput.zones`).
    package var zones: [Int]
    /// The last day (days since 1970-01-01, UTC) and how many days.
    package var today: Int
    package var days: Int
    package var grouping: Trends.Grouping

    /// What became of a request.
    package enum Outcome: Sendable {
        case report(TrendsReport)
        /// Nothing to show, and why (a sentence without the command's name).
        case nothing(String)
        /// The strap asked for is none of the library's, or several (a sentence).
        case unknownDevice(String)
    }

    /// The report of `entries` (the library of `folder`, newest first) over the `days` ending
    /// with `today`; `say` gets what is worth a line on the side (a file left out, the strap
    /// chosen among others).
    package static func make(
        _ entries: [LibraryEntry], folder: String, days: Int, today: Int, by grouping: Trends.Grouping,
        device: String?, say: (String) -> Void
    ) -> Outcome {
        guard !entries.isEmpty else {
            return .nothing("no recordings in \(folder) yet (hrm record makes them)")
        }
        let first = today - days + 1
        var sessions: [(day: Int, summary: RecordingSummary)] = []
        for entry in entries {
            switch entry.kind {
            case .unreadable(let message), .unopenable(let message):
                say("\(message): left out")
            case .newerFormat: continue
            case .session(let summary, _):
                sessions.append((Trends.day(ofMilliseconds: summary.start), summary))
            }
        }
        let period = days == 1 ? "today" : "in the last \(days) days"
        let inPeriod = sessions.filter { $0.day >= first && $0.day <= today }
        let chosen = strap(
            among: sessions.map(\.summary), inPeriod: inPeriod.map(\.summary), device: device, say: say)
        let strap: StrapChoice.Strap
        switch chosen {
        case .failure(let refusal): return .unknownDevice(refusal.message)
        case .success(nil): return .nothing("no sessions \(period) in \(folder)")
        case .success(let found?): strap = found
        }
        let own = inPeriod.flatMap { session in
            session.summary.straps.filter { $0.address == strap.device }.map {
                Trends.Session(day: session.day, figures: $0)
            }
        }
        guard !own.isEmpty else { return .nothing("no sessions of \(StrapChoice.label(strap)) \(period)") }
        let periods = Trends.periods(of: own, days: days, today: today, by: grouping)
        return .report(
            TrendsReport(
                strap: strap, sessions: own.count, periods: periods, zones: TrendsOutput.zones(of: periods),
                today: today, days: days, grouping: grouping))
    }

    /// A `--device` that names no strap, or several.
    package struct Refusal: Error {
        package let message: String
    }

    /// The strap `device` names among every strap of the library, or the one connected longest
    /// over the period; nil when the period has no session.
    private static func strap(
        among all: [RecordingSummary], inPeriod: [RecordingSummary], device: String?, say: (String) -> Void
    ) -> Result<StrapChoice.Strap?, Refusal> {
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
                return .failure(
                    Refusal(message: StrapChoice.refusal(device, outcome, among: straps, in: "the library")))
            }
            return .success(strap)
        }
        var connected: [String: Double] = [:]
        for summary in inPeriod {
            for strap in summary.straps { connected[strap.address, default: 0] += strap.connectedSeconds }
        }
        guard
            let longest = connected.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }),
            let strap = straps.first(where: { $0.device == longest.key })
        else { return .success(nil) }
        if connected.count > 1 {
            say(
                "\(StrapChoice.label(strap)), the strap recorded longest in the period "
                    + "(\(connected.count) straps; --device picks another)")
        }
        return .success(strap)
    }
}
