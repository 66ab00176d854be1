/// Each sample's time in a frame, derived as polar-ble-sdk's `PmdTimeStampUtils.getTimeStamps`
/// derives it: a frame carries only its last sample's time.
///
/// - With the previous frame's timestamp (of the same measurement and frame type), the interval
///   between samples is (this frame's timestamp - the previous one) / the number of samples,
///   and the first sample comes one interval after the previous frame's last.
/// - Without one (the first frame), the interval is 1 / the sample rate, counted back from the
///   last sample.
///
/// Every time but the last is rounded to the nanosecond half to even, as Kotlin's `round` does;
/// the last is the frame's timestamp exactly.
public enum PMDTimestamps {
    /// The times of `count` samples whose last was at `timestamp`, the previous frame's last at
    /// `previous` (nil or 0 for none, as the SDK keeps it), at `sampleRate` Hz (0 when unknown).
    ///
    /// One departure from the SDK: where it throws because `timestamp` is not after `previous`
    /// (the sensor's clock was set back, or frames crossed), this counts from the sample rate as
    /// for a first frame, so that a stream goes on. Throws `noSamples`, `noSampleRate` (no
    /// previous frame and no rate) and `timestampBeforeEpoch` (the first sample would fall before
    /// 2000-01-01).
    public static func times(
        count: Int, timestamp: UInt64, previous: UInt64?, sampleRate: Int
    ) throws(PMDError) -> [UInt64] {
        guard count > 0 else { throw PMDError(.noSamples, "a frame without samples has no sample times") }
        // Offsets from a whole-nanosecond base rather than the SDK's sum in Double: at 6e17 ns a
        // Double's step is 128 ns; the rounding (half to even of the exact sum) is the same.
        let base: UInt64
        let first: Double
        let interval: Double
        if let previous, previous != 0, timestamp > previous {
            interval = Double(timestamp - previous) / Double(count)
            base = previous
            first = interval
        } else {
            guard sampleRate > 0 else {
                throw PMDError(
                    .noSampleRate,
                    "sample times need the previous frame's timestamp or the sample rate; neither is known")
            }
            interval = 1_000_000_000 / Double(sampleRate)
            guard Double(timestamp) >= interval * Double(count) else {
                throw PMDError(
                    .timestampBeforeEpoch,
                    "\(count) samples at \(sampleRate) Hz ending at \(timestamp) ns would start before the sensor's epoch"
                )
            }
            base = timestamp
            first = -interval * Double(count - 1)
        }
        var times: [UInt64] = []
        times.reserveCapacity(count)
        for index in 0..<(count - 1) {
            times.append(roundedHalfEven(base, plus: first + interval * Double(index)))
        }
        times.append(timestamp)
        return times
    }
}

/// `base + offset` rounded to a whole nanosecond, half to even, as Kotlin's `round` rounds the
/// sum; clamped to UInt64's range. The offset is a frame's span at most (seconds, in ns).
func roundedHalfEven(_ base: UInt64, plus offset: Double) -> UInt64 {
    guard offset.isFinite, abs(offset) < 9e18 else { return base }
    let whole = offset.rounded(.down)
    let fraction = offset - whole
    let wholeNanoseconds = Int64(whole)
    var value: UInt64
    if wholeNanoseconds >= 0 {
        let (sum, overflow) = base.addingReportingOverflow(UInt64(wholeNanoseconds))
        if overflow { return .max }
        value = sum
    } else {
        guard base >= wholeNanoseconds.magnitude else { return 0 }
        value = base - wholeNanoseconds.magnitude
    }
    if fraction > 0.5 || (fraction == 0.5 && value % 2 == 1) {
        guard value < .max else { return .max }
        value += 1
    }
    return value
}
