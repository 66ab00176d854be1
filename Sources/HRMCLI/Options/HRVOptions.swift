public import ArgumentParser

/// `--hrv-every`, `--hrv-window` and `--no-correction`: live HRV in `watch`.
public struct HRVOptions: ParsableArguments, Sendable {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds between hrv events; 0 for none. Default: 5.", valueName: "seconds"),
        transform: HRVOptions.interval)
    public var hrvEvery: Double = 5

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Seconds of beats HRV is computed over. Default: 60.", valueName: "seconds"),
        transform: Seconds.parsing)
    public var hrvWindow: Seconds = Self.defaultWindow

    @Flag(help: "Use RR intervals as they come, without correcting missed, extra or ectopic beats.")
    public var noCorrection = false

    public init() {}

    public func validate() throws {
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

    var settings: HRVTracker.Settings {
        HRVTracker.Settings(
            every: hrvEvery > 0 ? hrvEvery : nil, window: hrvWindow.value, correcting: !noCorrection)
    }
}
