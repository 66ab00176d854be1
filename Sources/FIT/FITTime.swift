/// FIT's clock: a `date_time` is a uint32 of seconds since 1989-12-31T00:00:00Z (UTC), the FIT
/// epoch, which is 631,065,600 s after the Unix epoch.
public enum FITTime {
    /// Seconds from the Unix epoch to the FIT epoch.
    public static let epochOffset: Int64 = 631_065_600
    /// The largest `date_time` (0xFFFFFFFF is "no value").
    public static let latest: UInt32 = 0xFFFF_FFFE

    /// The `date_time` of `milliseconds` since the Unix epoch, rounded down to the second. Times
    /// before the FIT epoch give 0 and times after 2126 give `latest`: a file always has a time,
    /// never a trap. (Values below 0x10000000 mean "seconds since the device started" to FIT
    /// readers; no real recording is that old.)
    public static func timestamp(unixMilliseconds milliseconds: Int64) -> UInt32 {
        // Rounded toward minus infinity, so -1 ms is the second before the Unix epoch.
        let seconds = milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0)
        let fit = seconds - epochOffset  // cannot overflow: |seconds| ≤ Int64.max / 1000
        if fit < 0 { return 0 }
        if fit > Int64(latest) { return latest }
        return UInt32(fit)
    }

    /// A duration in milliseconds as FIT's `total_*_time` (uint32, scale 1000, so milliseconds):
    /// negative gives 0, beyond about 49.7 days gives 0xFFFFFFFE.
    static func duration(milliseconds: Int64) -> UInt32 {
        if milliseconds < 0 { return 0 }
        if milliseconds > Int64(latest) { return latest }
        return UInt32(milliseconds)
    }
}
