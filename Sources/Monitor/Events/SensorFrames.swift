/// One frame of a strap's ECG stream (Polar's PMD), decoded: what an `ecg` event carries.
package struct ECGFrame: Sendable, Equatable {
    /// The first sample's time on the strap's clock (nanoseconds since 2000-01-01 by the strap's
    /// reckoning; an H10 that was never told the time counts from 2019-01-01). Sample `i` is at
    /// `sensorNanoseconds + i * 1e9 / rateHz`.
    package var sensorNanoseconds: UInt64
    /// Samples per second the stream was started at.
    package var rateHz: Int
    /// The samples in microvolts, oldest first.
    package var microvolts: [Int32]
    /// About how many samples were lost just before this frame (a notification that never came).
    package var missingSamples: Int

    package init(sensorNanoseconds: UInt64, rateHz: Int, microvolts: [Int32], missingSamples: Int = 0) {
        self.sensorNanoseconds = sensorNanoseconds
        self.rateHz = rateHz
        self.microvolts = microvolts
        self.missingSamples = missingSamples
    }
}

/// One frame of a strap's acceleration stream, decoded: what an `acc` event carries.
package struct ACCFrame: Sendable, Equatable {
    /// The first sample's time on the strap's clock, as `ECGFrame`'s.
    package var sensorNanoseconds: UInt64
    /// Samples per second the stream was started at.
    package var rateHz: Int
    /// The range it was started with, in g (±2, ±4 or ±8).
    package var rangeG: Int
    /// The samples, (x, y, z) in milli-g each, oldest first.
    package var milliG: [(x: Int32, y: Int32, z: Int32)]
    /// About how many samples were lost just before this frame.
    package var missingSamples: Int

    package init(
        sensorNanoseconds: UInt64, rateHz: Int, rangeG: Int, milliG: [(x: Int32, y: Int32, z: Int32)],
        missingSamples: Int = 0
    ) {
        self.sensorNanoseconds = sensorNanoseconds
        self.rateHz = rateHz
        self.rangeG = rangeG
        self.milliG = milliG
        self.missingSamples = missingSamples
    }

    package static func == (a: ACCFrame, b: ACCFrame) -> Bool {
        a.sensorNanoseconds == b.sensorNanoseconds && a.rateHz == b.rateHz && a.rangeG == b.rangeG
            && a.missingSamples == b.missingSamples && a.milliG.count == b.milliG.count
            && zip(a.milliG, b.milliG).allSatisfy { $0.x == $1.x && $0.y == $1.y && $0.z == $1.z }
    }
}

/// An R peak found in a strap's ECG: what an `ecg_beat` event carries.
package struct ECGBeat: Sendable, Equatable {
    /// The peak sample's time on the strap's clock.
    package var sensorNanoseconds: UInt64
    /// The interval from the previous peak, in milliseconds; nil for the first peak after the
    /// stream (re)started.
    package var rrMilliseconds: Double?

    package init(sensorNanoseconds: UInt64, rrMilliseconds: Double?) {
        self.sensorNanoseconds = sensorNanoseconds
        self.rrMilliseconds = rrMilliseconds
    }
}
