#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A moment on the clock `ContinuousClock` reads (on Linux CLOCK_BOOTTIME: it goes on through a
/// suspend, and no change of the wall clock bends it), as whole nanoseconds.
///
/// `ContinuousClock.Instant` is not frozen: a struct holding one has a size known only at run
/// time, so every copy of a `MonitorEvent` went through the runtime's metadata and value witnesses,
/// eleven metadata lookups a notification (Benchmarks/Watch/README.md, #29). This is an integer.
package struct ContinuousInstant: Sendable, Hashable, Comparable {
    /// Nanoseconds since the clock's start (the machine's boot, on Linux).
    package let nanoseconds: Int64

    package init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// Now.
    package static var now: ContinuousInstant {
        var spec = timespec()
        // The clocks Swift's runtime reads for ContinuousClock (Concurrency/Clock.cpp).
        #if os(Linux)
            clock_gettime(CLOCK_BOOTTIME, &spec)
        #elseif canImport(Darwin)
            clock_gettime(CLOCK_MONOTONIC_RAW, &spec)
        #else
            clock_gettime(CLOCK_MONOTONIC, &spec)
        #endif
        return ContinuousInstant(nanoseconds: Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec))
    }

    /// The time from `rhs` to `lhs`.
    package static func - (lhs: ContinuousInstant, rhs: ContinuousInstant) -> Duration {
        .nanoseconds(lhs.nanoseconds &- rhs.nanoseconds)
    }

    /// `duration` after `instant` (to the nanosecond; saturating).
    package static func + (instant: ContinuousInstant, duration: Duration) -> ContinuousInstant {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let offset =
            overflow
            ? (seconds < 0 ? Int64.min : Int64.max)
            : scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        let (sum, past) = instant.nanoseconds.addingReportingOverflow(offset)
        return ContinuousInstant(nanoseconds: past ? (offset < 0 ? Int64.min : Int64.max) : sum)
    }

    package static func < (lhs: ContinuousInstant, rhs: ContinuousInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }
}
