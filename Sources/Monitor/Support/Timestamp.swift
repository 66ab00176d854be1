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
        var seconds = time_t(millisecondsSinceEpoch.dividedFloor(by: 1000))
        let millis = Int(millisecondsSinceEpoch - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var index = 0
        func put(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            for _ in 0..<width {
                bytes[index] = UInt8(ascii: "0") + UInt8(rest / divisor % 10)
                rest %= divisor
                divisor /= 10
                index += 1
            }
        }
        func put(_ byte: Unicode.Scalar) {
            bytes[index] = UInt8(ascii: byte)
            index += 1
        }
        put(Int(parts.tm_year) + 1900, 4)
        put("-")
        put(Int(parts.tm_mon) + 1, 2)
        put("-")
        put(Int(parts.tm_mday), 2)
        put("T")
        put(Int(parts.tm_hour), 2)
        put(":")
        put(Int(parts.tm_min), 2)
        put(":")
        put(Int(parts.tm_sec), 2)
        put(".")
        put(millis, 3)
        put("Z")
        return index
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
