#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `hrm trends`' figures: one strap's sessions of the library summed per UTC day or ISO week,
/// from what the index keeps of each recording (nothing is read again).
///
/// A day's resting heart rate is the lowest of its sessions' (as the index's `days` view has
/// it), its RMSSD and alpha1 the mean of its sessions' and its ln RMSSD the mean of their logs
/// (the HRV apps average in the log domain). A week's figures are the means of its days' (a day
/// of three sessions weighs no more than a day of one); times are sums.
package enum Trends {
    /// How the days are grouped.
    package enum Grouping: String, Sendable, CaseIterable {
        case day, week
    }

    /// One session of the strap: its UTC day (days since 1970-01-01) and its figures.
    package struct Session: Sendable {
        package var day: Int
        package var figures: RecordingSummary.StrapFigures

        /// Every stored property, as given.
        package init(day: Int, figures: RecordingSummary.StrapFigures) {
            self.day = day
            self.figures = figures
        }
    }

    /// The figures of one day or week; nil where no session gave the figure.
    package struct Period: Equatable, Sendable {
        /// `2026-11-26`, or `2026-W48` (the ISO week-year and week).
        package var label: String
        /// The first day of the period within the range asked for, and how many of its days are.
        package var firstDay: Int
        package var days: Int
        package var sessions: Int
        /// Seconds the strap was connected, over the period's sessions.
        package var recordedSeconds: Double
        package var restingBPM: Double?
        package var rmssd: Double?
        package var lnRMSSD: Double?
        package var alpha1: Double?
        /// Seconds in each zone (0 below zone 1); nil when no session of the period had zones.
        package var zoneSeconds: [Int: Int]?

        /// Every stored property, as given.
        package init(
            label: String, firstDay: Int, days: Int, sessions: Int, recordedSeconds: Double,
            restingBPM: Double? = nil, rmssd: Double? = nil, lnRMSSD: Double? = nil, alpha1: Double? = nil,
            zoneSeconds: [Int: Int]?
        ) {
            self.label = label
            self.firstDay = firstDay
            self.days = days
            self.sessions = sessions
            self.recordedSeconds = recordedSeconds
            self.restingBPM = restingBPM
            self.rmssd = rmssd
            self.lnRMSSD = lnRMSSD
            self.alpha1 = alpha1
            self.zoneSeconds = zoneSeconds
        }

        /// Whether any session fell in the period.
        package var hasData: Bool { sessions > 0 }
    }

    /// The periods of the `days` days that end with `today` (days since 1970-01-01, UTC), oldest
    /// first, every one of them (with no data where no session fell); a week at either end
    /// holds only the days within the range.
    package static func periods(of sessions: [Session], days: Int, today: Int, by grouping: Grouping)
        -> [Period]
    {
        let first = today - max(days, 1) + 1
        var perDay: [Int: [RecordingSummary.StrapFigures]] = [:]
        for session in sessions where session.day >= first && session.day <= today {
            perDay[session.day, default: []].append(session.figures)
        }
        let dayPeriods = (first...today).map { day in
            Self.day(day, perDay[day] ?? [])
        }
        switch grouping {
        case .day:
            return dayPeriods
        case .week:
            var weeks: [Period] = []
            var current: [Period] = []
            for period in dayPeriods {
                if let last = current.last, monday(of: last.firstDay) != monday(of: period.firstDay) {
                    weeks.append(week(current))
                    current = []
                }
                current.append(period)
            }
            if !current.isEmpty { weeks.append(week(current)) }
            return weeks
        }
    }

    static func day(_ day: Int, _ figures: [RecordingSummary.StrapFigures]) -> Period {
        let rmssds = figures.compactMap { $0.hrv?.rmssd }.filter { $0 > 0 }
        let zoned = figures.filter { !$0.zoneSeconds.isEmpty }
        var zones: [Int: Int]?
        if !zoned.isEmpty {
            var sums: [Int: Int] = [:]
            for strap in zoned { sums.merge(strap.zoneSeconds, uniquingKeysWith: +) }
            zones = sums
        }
        return Period(
            label: date(day), firstDay: day, days: 1, sessions: figures.count,
            recordedSeconds: figures.reduce(0) { $0 + $1.connectedSeconds },
            restingBPM: figures.compactMap(\.restingBPM).min(), rmssd: mean(rmssds),
            lnRMSSD: mean(rmssds.map { log($0) }), alpha1: mean(figures.compactMap { $0.hrv?.alpha1 }),
            zoneSeconds: zones)
    }

    static func week(_ days: [Period]) -> Period {
        let first = days[0].firstDay
        var zones: [Int: Int]?
        for day in days {
            guard let seconds = day.zoneSeconds else { continue }
            zones = (zones ?? [:]).merging(seconds, uniquingKeysWith: +)
        }
        return Period(
            label: isoWeek(first), firstDay: first, days: days.count,
            sessions: days.reduce(0) { $0 + $1.sessions },
            recordedSeconds: days.reduce(0) { $0 + $1.recordedSeconds },
            restingBPM: mean(days.compactMap(\.restingBPM)), rmssd: mean(days.compactMap(\.rmssd)),
            lnRMSSD: mean(days.compactMap(\.lnRMSSD)), alpha1: mean(days.compactMap(\.alpha1)),
            zoneSeconds: zones)
    }

    static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    /// The UTC day (days since 1970-01-01) of `milliseconds` since the epoch.
    package static func day(ofMilliseconds milliseconds: Int64) -> Int {
        Int(floorDivide(milliseconds, 86_400_000))
    }

    /// The Monday of `day`'s ISO week (1970-01-01 was a Thursday).
    static func monday(of day: Int) -> Int { day - Int(floorModulo(Int64(day) + 3, 7)) }

    /// `2026-W48`: the ISO week-year is the year of the week's Thursday.
    package static func isoWeek(_ day: Int) -> String {
        let thursday = monday(of: day) + 3
        let (year, _, _) = civil(thursday)
        let januaryFirst = daysFromCivil(year: year, month: 1, day: 1)
        let week = (thursday - januaryFirst) / 7 + 1
        return "\(year)-W" + (week < 10 ? "0" : "") + String(week)
    }

    /// `2026-11-26`.
    package static func date(_ day: Int) -> String {
        let (year, month, dayOfMonth) = civil(day)
        func two(_ value: Int) -> String { (value < 10 ? "0" : "") + String(value) }
        return String(year) + "-" + two(month) + "-" + two(dayOfMonth)
    }

    /// The proleptic Gregorian date of a day since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = Int64(days) + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (`days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = Int64(month <= 2 ? year - 1 : year)
        let era = floorDivide(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let monthShifted = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthShifted + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return Int(era * 146_097 + dayOfEra - 719_468)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private static func floorModulo(_ value: Int64, _ divisor: Int64) -> Int64 {
        value - floorDivide(value, divisor) * divisor
    }
}
