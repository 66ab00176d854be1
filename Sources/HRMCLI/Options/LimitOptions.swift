public import ArgumentParser
public import Monitor
import Outputs
import SessionLibrary

/// `--count` and `--duration`: when `watch` stops by itself.
///
/// Both take a value that starts with a dash (`--count -1`, `--duration -5`) as theirs, so the
/// user is told what is allowed instead of "Missing value for '--count <count>'".
public struct LimitOptions: ParsableArguments, Sendable {
    @Option(parsing: .unconditional, help: "Stop after this many measurements.")
    public var count: Int?

    @Option(
        parsing: .unconditional, help: "Stop after this long: seconds, or with a unit (90s, 45m, 2h).",
        transform: Seconds.parsing)
    public var duration: Seconds?

    public init() {}

    public func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    /// The limits as the session applies them.
    var runLimits: RunLimits { RunLimits(count: count, duration: duration) }
}
