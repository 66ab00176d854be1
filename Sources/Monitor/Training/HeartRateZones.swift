/// Heart-rate zones as lower bounds in bpm: zone 1 from the first bound, zone 2 from the second,
/// and so on; below the first bound is zone 0.
package struct HeartRateZones: Sendable, Equatable {
    /// Increasing lower bounds, one per zone.
    package let lowerBounds: [Int]

    package init(lowerBounds: [Int]) {
        self.lowerBounds = lowerBounds
    }

    /// The five zones of Polar and Garmin: 50, 60, 70, 80 and 90 % of the maximum heart rate, or
    /// of the heart-rate reserve above `rest` (Karvonen) when it is given.
    package init(maximum: Int, rest: Int? = nil) {
        let floor = Double(rest ?? 0)
        let span = Double(maximum) - floor
        lowerBounds = Self.percentages.map { Int((floor + span * $0).rounded()) }
    }

    package static let percentages = [0.5, 0.6, 0.7, 0.8, 0.9]

    /// The zone `bpm` is in: 0 below zone 1, else 1 to `lowerBounds.count`.
    package func zone(for bpm: Int) -> Int {
        lowerBounds.lastIndex { bpm >= $0 }.map { $0 + 1 } ?? 0
    }

    package var count: Int { lowerBounds.count }
}
