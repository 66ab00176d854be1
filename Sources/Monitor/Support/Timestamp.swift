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
        let seconds = millisecondsSinceEpoch.dividedFloor(by: 1000)
        let millis = Int(millisecondsSinceEpoch - seconds * 1000)
        let parts = Self.civil(seconds)
        var index = 0
        // The last `width` digits, from the right: division by the constant 10 compiles to a
        // multiplication, where a divisor computed at run time costs a hardware division a digit.
        func put(_ value: Int, _ width: Int) {
            var rest = value
            var position = index + width
            while position > index {
                position -= 1
                bytes[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
            index += width
        }
        func put(_ byte: Unicode.Scalar) {
            bytes[index] = UInt8(ascii: byte)
            index += 1
        }
        put(parts.year, 4)
        put("-")
        put(parts.month, 2)
        put("-")
        put(parts.day, 2)
        put("T")
        put(parts.hour, 2)
        put(":")
        put(parts.minute, 2)
        put(":")
        put(parts.second, 2)
        put(".")
        put(millis, 3)
        put("Z")
        return index
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
