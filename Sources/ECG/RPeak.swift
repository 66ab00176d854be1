/// An R peak found in an ECG: when, and how long after the one before.
public struct RPeak: Hashable, Sendable {
    /// The peak's sample: its index among the samples given since the start (or the last reset).
    public let sampleIndex: Int
    /// The peak sample's time, in the unit and on the clock the samples came with (PMD: the
    /// sensor's nanoseconds).
    public let time: Int64
    /// The time since the previous peak, in the samples' unit; nil for the first peak (after a
    /// start, a reset or a gap).
    public let rr: Int64?
    /// The cleaned signal's value at the peak (high-passed), in the samples' unit (microvolts).
    public let amplitude: Double

    /// A peak at `sampleIndex`, `time`, `rr` after the previous one, `amplitude` high.
    public init(sampleIndex: Int, time: Int64, rr: Int64?, amplitude: Double) {
        self.sampleIndex = sampleIndex
        self.time = time
        self.rr = rr
        self.amplitude = amplitude
    }

    /// `rr` in milliseconds, for times in nanoseconds.
    public var rrMilliseconds: Double? { rr.map { Double($0) / 1_000_000 } }
}
