#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A person's own normal, from their earlier readings (every strap's: HRV is the person's): the
/// mean of the last 7 days' readings, and a normal band of ±1 standard deviation of the last 30
/// days' around it, for ln RMSSD and for the resting heart rate. Until the last 7 days hold
/// `minimumReadings` readings the baseline is still being built, and a reading gets no verdict.
package struct ReadinessBaseline: Equatable, Sendable {
    /// Readings the last 7 days must hold before there is a baseline.
    package static let minimumReadings = 3
    static let dayMilliseconds: Int64 = 86_400_000

    /// An earlier reading: its start (milliseconds since the epoch) and figures.
    package struct Prior: Sendable {
        package var start: Int64
        package var figures: ReadinessFigures

        /// Every stored property, as given.
        package init(start: Int64, figures: ReadinessFigures) {
            self.start = start
            self.figures = figures
        }
    }

    /// One figure's normal: the 7-day mean, the 30-day standard deviation, and the band.
    package struct Band: Equatable, Sendable {
        package var mean: Double
        package var deviation: Double
        package var low: Double { mean - deviation }
        package var high: Double { mean + deviation }

        /// Where `value` falls.
        package func verdict(_ value: Double) -> Verdict {
            value < low ? .lower : value > high ? .higher : .within
        }
    }

    /// Where a reading falls against the band.
    package enum Verdict: String, Sendable {
        case within, lower, higher
    }

    /// Readings in the last 7 and 30 days before the one scored.
    package var readings7Days: Int
    package var readings30Days: Int
    /// Nil while the baseline is being built.
    package var lnRMSSD: Band?
    package var restingHR: Band?

    /// Whether there are enough readings for a verdict.
    package var isBuilt: Bool { lnRMSSD != nil }

    /// The baseline at `now` (milliseconds since the epoch) from `prior` readings: those that
    /// started in the 30 days before `now` count, later ones (another reading of the same
    /// minute, a clock set back) do not.
    package init(_ prior: [Prior], at now: Int64) {
        let month = prior.filter { $0.start < now && $0.start >= now - 30 * Self.dayMilliseconds }
        let week = month.filter { $0.start >= now - 7 * Self.dayMilliseconds }
        readings7Days = week.count
        readings30Days = month.count
        guard week.count >= Self.minimumReadings else { return }
        lnRMSSD = Band(
            mean: Self.mean(week.map(\.figures.lnRMSSD)),
            deviation: Self.deviation(month.map(\.figures.lnRMSSD)))
        restingHR = Band(
            mean: Self.mean(week.map(\.figures.restingHR)),
            deviation: Self.deviation(month.map(\.figures.restingHR)))
    }

    static func mean(_ values: [Double]) -> Double {
        values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
    }

    /// The sample standard deviation (N - 1); 0 below two values.
    static func deviation(_ values: [Double]) -> Double {
        guard values.count > 1 else { return 0 }
        let average = mean(values)
        let squares = values.reduce(0.0) { $0 + ($1 - average) * ($1 - average) }
        return sqrt(squares / Double(values.count - 1))
    }
}
