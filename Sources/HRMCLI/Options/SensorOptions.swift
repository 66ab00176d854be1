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

    @Option(
        help: ArgumentHelp(
            "Whose RR intervals HRV uses: the strap's own, or those between the R peaks hrm finds in its ECG (needs --ecg).",
            valueName: "strap|ecg"))
    public var rrSource: RRSourceArgument = .strap

    public init() {}

    public func validate() throws {
        guard SensorStreams.Acceleration.rates.contains(accRate) else {
            throw ValidationError(
                "--acc-rate must be 25, 50, 100 or 200 (samples per second), not \(accRate)")
        }
        if rrSource == .ecg && !ecg {
            throw ValidationError("--rr-source ecg takes HRV from the ECG: give --ecg too")
        }
        guard SensorStreams.Acceleration.ranges.contains(accRange) else {
            throw ValidationError("--acc-range must be 2, 4 or 8 (g), not \(accRange)")
        }
    }

    /// `settings` taking their RR intervals from `--rr-source`.
    func hrv(_ settings: HRVTracker.Settings) -> HRVTracker.Settings {
        var chosen = settings
        chosen.source = rrSource.source
        return chosen
    }

    /// The streams asked for.
    var streams: SensorStreams {
        SensorStreams(
            ecg: ecg, acc: acc ? SensorStreams.Acceleration(rateHz: accRate, rangeG: accRange) : nil)
    }
}

/// `--rr-source`: the strap's RR intervals or the ECG's.
public enum RRSourceArgument: String, ArgumentChoice, Sendable {
    /// The strap's own RR intervals (its measurements).
    case strap
    /// The intervals between the R peaks hrm finds in the ECG.
    case ecg

    var source: HRVTracker.RRSource { self == .ecg ? .ecg : .strap }
}
