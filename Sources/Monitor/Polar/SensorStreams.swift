/// What `--ecg` and `--acc` ask of a strap's PMD service (Polar Measurement Data).
package struct SensorStreams: Sendable, Equatable {
    /// The acceleration stream's settings.
    package struct Acceleration: Sendable, Equatable {
        /// Samples per second: 25, 50, 100 or 200 (the H10's choices).
        package var rateHz: Int
        /// The range in g: 2, 4 or 8.
        package var rangeG: Int

        /// The rates and ranges an H10 offers.
        package static let rates = [25, 50, 100, 200]
        package static let ranges = [2, 4, 8]

        package init(rateHz: Int = 200, rangeG: Int = 8) {
            self.rateHz = rateHz
            self.rangeG = rangeG
        }
    }

    /// The ECG at 130 Hz.
    package var ecg: Bool
    /// The acceleration, at the settings given; nil for none.
    package var acc: Acceleration?

    package init(ecg: Bool = false, acc: Acceleration? = nil) {
        self.ecg = ecg
        self.acc = acc
    }

    /// Nothing asked for: hrm does not touch the PMD service.
    package var isEmpty: Bool { !ecg && acc == nil }
}
