/// The heart rate went past a bound the user set, and stayed there.
package struct HeartRateAlert: Sendable, Equatable {
    package enum Direction: String, Sendable {
        case above, below
    }

    package let direction: Direction
    /// The heart rate that set the alert off.
    package let bpm: Int
    /// The bound it crossed.
    package let bound: Int
}

/// One bound's alert, without flapping: it goes off once the heart rate has been past the bound
/// for `hold`, and can go off again only after it came back by `rearmMargin` bpm.
package struct AlertTrigger: Sendable {
    package let direction: HeartRateAlert.Direction
    package let bound: Int
    package static let hold: Int64 = 3000  // milliseconds
    package static let rearmMargin = 3

    private var armed = true
    /// When the heart rate went past the bound, while it stays there.
    private var pastSince: Int64? = nil

    package init(_ direction: HeartRateAlert.Direction, bound: Int) {
        self.direction = direction
        self.bound = bound
    }

    /// Takes a heart rate measured at `milliseconds` (any clock that only goes forward); returns
    /// the alert when this measurement sets it off.
    package mutating func observe(bpm: Int, at milliseconds: Int64) -> HeartRateAlert? {
        let past = direction == .above ? bpm > bound : bpm < bound
        let back =
            direction == .above ? bpm <= bound - Self.rearmMargin : bpm >= bound + Self.rearmMargin
        if back { armed = true }
        guard past else {
            pastSince = nil
            return nil
        }
        let since = pastSince ?? milliseconds
        pastSince = since
        guard armed, milliseconds - since >= Self.hold else { return nil }
        armed = false
        return HeartRateAlert(direction: direction, bpm: bpm, bound: bound)
    }

    /// The link dropped: time past the bound starts again from the next measurement.
    package mutating func interrupt() {
        pastSince = nil
    }
}
