public import ArgumentParser
import Monitor

/// `--ecg` and `--acc`: the ECG and acceleration a strap streams through Polar's PMD service
/// (the Polar H10), beside heart rate.
public struct SensorOptions: ParsableArguments, Sendable {
    @Flag(
        help:
            "Stream the strap's ECG (130 Hz, µV; a Polar H10) and find its R peaks: ecg and ecg_beat events. Pairs the strap if it needs it."
    )
    public var ecg = false

    @Flag(
        help: "Stream the strap's acceleration (mG; a Polar H10): acc events. Pairs the strap if it needs it."
    )
    public var acc = false

    @Option(help: ArgumentHelp("Acceleration samples per second: 25, 50, 100 or 200.", valueName: "hz"))
    public var accRate: Int = 200

    @Option(help: ArgumentHelp("Acceleration range in g: 2, 4 or 8.", valueName: "g"))
    public var accRange: Int = 8

    public init() {}

    public func validate() throws {
        guard SensorStreams.Acceleration.rates.contains(accRate) else {
            throw ValidationError(
                "--acc-rate must be 25, 50, 100 or 200 (samples per second), not \(accRate)")
        }
        guard SensorStreams.Acceleration.ranges.contains(accRange) else {
            throw ValidationError("--acc-range must be 2, 4 or 8 (g), not \(accRange)")
        }
    }

    /// The streams asked for.
    var streams: SensorStreams {
        SensorStreams(
            ecg: ecg, acc: acc ? SensorStreams.Acceleration(rateHz: accRate, rangeG: accRange) : nil)
    }
}
