#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A wall-clock instant, printed as RFC 3339 in UTC with milliseconds: `2026-11-22T08:17:09.123Z`.
/// (Without Foundation: it would triple hrm's resident memory for one date format.)
package struct Timestamp: Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    package let millisecondsSinceEpoch: Int64

    package init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    package static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(millisecondsSinceEpoch: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// `2026-11-22T10:06:23.968Z`. Written digit by digit into 24 bytes: this runs for every
    /// line `watch` prints, and string interpolation would cost several allocations each time.
    package var description: String {
        String(unsafeUninitializedCapacity: Self.width) { write(into: $0) }
    }

    /// The bytes of the form: `2026-11-22T10:06:23.968Z`.
    package static let width = 24

    /// Writes the form into `bytes` (24 of them at least); the count written.
    package func write(into bytes: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var last = LastSecond()
        return write(into: bytes, reusing: &last)
    }

    /// The calendar part of the last second a writer wrote (`2026-11-22T10:06:23.`), kept by a
    /// writer of many lines: all the lines of one second but its first copy it rather than work
    /// the calendar out again (at 200 notifications a second, 199 of 200).
    package struct LastSecond: Sendable {
        fileprivate var second = Int64.min
        fileprivate var bytes: (UInt64, UInt64, UInt32) = (0, 0, 0)

        /// None yet.
        package init() {}
    }

    /// Writes the form into `bytes` (24 of them at least), the date and time of day copied from
    /// `last` when it is the same second; the count written.
    package func write(into bytes: UnsafeMutableBufferPointer<UInt8>, reusing last: inout LastSecond) -> Int {
        guard bytes.count >= Self.width, let out = bytes.baseAddress else { return 0 }
        let seconds = millisecondsSinceEpoch.dividedFloor(by: 1000)
        // The remainder, not `millisecondsSinceEpoch - seconds * 1000`: that product overflows
        // for the earliest instants (a hostile recording's).
        let remainder = Int(millisecondsSinceEpoch % 1000)
        let millis = remainder < 0 ? remainder + 1000 : remainder
        let calendar = 20  // `2026-11-22T10:06:23.`
        if seconds == last.second {
            withUnsafeBytes(of: last.bytes) { saved in
                if let from = saved.baseAddress {
                    UnsafeMutableRawPointer(out).copyMemory(from: from, byteCount: calendar)
                }
            }
        } else {
            Self.writeCalendar(of: seconds, into: out)
            withUnsafeMutableBytes(of: &last.bytes) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: out, count: calendar))
            }
            last.second = seconds
        }
        out[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millis / 100)
        Self.two(millis, at: out + 21)
        out[23] = UInt8(ascii: "Z")
        return Self.width
    }

    /// `2026-11-22T10:06:23.`, 20 bytes at `out`. Straight-line stores at fixed places, two digits
    /// at a time, dividing only by constants (a multiplication each).
    private static func writeCalendar(of seconds: Int64, into out: UnsafeMutablePointer<UInt8>) {
        let parts = civil(seconds)
        two(parts.year / 100, at: out)
        two(parts.year, at: out + 2)
        out[4] = UInt8(ascii: "-")
        two(parts.month, at: out + 5)
        out[7] = UInt8(ascii: "-")
        two(parts.day, at: out + 8)
        out[10] = UInt8(ascii: "T")
        two(parts.hour, at: out + 11)
        out[13] = UInt8(ascii: ":")
        two(parts.minute, at: out + 14)
        out[16] = UInt8(ascii: ":")
        two(parts.second, at: out + 17)
        out[19] = UInt8(ascii: ".")
    }

    /// The last two digits of `value`'s magnitude at `out`: a year out of range (a hostile
    /// recording's) prints wrong, never traps.
    @inline(__always)
    private static func two(_ value: Int, at out: UnsafeMutablePointer<UInt8>) {
        let last = Int(value.magnitude % 100)
        out[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: last / 10)
        out[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: last % 10)
    }

    /// The UTC calendar date and time of `seconds` since 1970, by arithmetic: the proleptic
    /// Gregorian calendar's civil-from-days (H. Hinnant's algorithm). `gmtime_r` does the same
    /// behind glibc's time-zone lock, for every line `watch` prints.
    package static func civil(_ seconds: Int64)
        -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)
    {
        let days = seconds.dividedFloor(by: 86_400)
        let inDay = Int(seconds - days * 86_400)
        let shifted = days + 719_468  // from 0000-03-01
        let era = shifted.dividedFloor(by: 146_097)
        let dayOfEra = shifted - era * 146_097  // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // from March
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day), inDay / 3600, inDay / 60 % 60, inDay % 60)
    }
}

extension Int64 {
    /// Division rounding toward negative infinity (instants before 1970 stay correct).
    fileprivate func dividedFloor(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

extension Timestamp {
    /// Local wall-clock time, `HH:MM:SS`, for text output meant for people.
    package var localClock: String {
        var seconds = time_t(millisecondsSinceEpoch / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}
