internal import Glibc

/// CLOCK_MONOTONIC in nanoseconds: the clock deadlines of poll loops are reckoned on, and the one
/// other processes on the machine share (a benchmark's harness, hrm-sim's log).
@inline(__always) public func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

extension Duration {
    /// Whole nanoseconds, saturating at 0 and at about 292 years: for deadlines on
    /// `monotonicNanos()`.
    public var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        if seconds > 9_000_000_000 { return UInt64(Int64.max) }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Whole milliseconds, rounded toward zero (a log line's `ms`).
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// In seconds, with the fraction.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// `10 s`, `1.5 s`, `500 ms`: how long a deadline was, for messages.
    public var shortText: String {
        let millis = wholeMilliseconds
        if millis < 1000 { return "\(millis) ms" }
        if millis % 1000 == 0 { return "\(millis / 1000) s" }
        var text = "\(millis / 1000).\(String(millis % 1000 + 1000).dropFirst())"
        while text.hasSuffix("0") { text.removeLast() }
        return "\(text) s"
    }

    /// `25s`, `500ms`: `shortText` without its space, for a log line's `key=value`.
    public var compactText: String { shortText.replacing(" ", with: "") }
}
