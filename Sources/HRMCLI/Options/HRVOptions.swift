public import ArgumentParser
public import Monitor
import Outputs
import SessionLibrary

/// `--hrv-every`, `--hrv-window` and `--no-correction`: live HRV in `watch`.
public struct HRVOptions: ParsableArguments, Sendable {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds between hrv events; 0 for none. Default: 5.", valueName: "seconds"),
        transform: HRVOptions.interval)
    public var hrvEvery: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Seconds of beats HRV is computed over. Default: 60.", valueName: "seconds"),
        transform: Seconds.parsing)
    public var hrvWindow: Seconds?

    @Flag(help: "Use RR intervals as they come, without correcting missed, extra or ectopic beats.")
    public var noCorrection = false

    public init() {}

    public func validate() throws {
        guard let hrvWindow else { return }
        if hrvWindow.value < 10 { throw ValidationError("--hrv-window must be at least 10 seconds") }
        try hrvWindow.check(atMost: 3600, "--hrv-window")
    }

    /// `0` (no events) or a time as every time option takes it.
    static func interval(_ text: String) throws(ValidationError) -> Double {
        if Double(text) == 0, Seconds.parse(text) == 0 { return 0 }
        return try Seconds.parsing(text).value
    }

    static let defaultWindow: Seconds = {
        guard let minute = try? Seconds(60) else { preconditionFailure("60 s is a valid time") }
        return minute
    }()

    /// The settings, 5 s and 60 s where not given.
    var settings: HRVTracker.Settings {
        let every = hrvEvery ?? 5
        return HRVTracker.Settings(
            every: every > 0 ? every : nil, window: (hrvWindow ?? Self.defaultWindow).value,
            correcting: !noCorrection)
    }
}
