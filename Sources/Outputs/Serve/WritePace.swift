/// When a server's writes to its clients go out: at once when the last went out at least
/// `interval` ago, else `interval` after it, with every event that came meanwhile in the same
/// writes. A strap notifies one to four times a second, so every event goes out the moment it
/// comes; a faster stream (a benchmark's 200 notifications a second, several straps at once) costs
/// one write a client per interval instead of one per event, and each event waits at most
/// `interval`. Each write is a system call that, on a local connection, also wakes the client's
/// process: most of what a client costs the server (Benchmarks/Serve/README.md).
///
/// A value with no clock of its own: the caller passes `now`, so tests drive it by hand.
package struct WritePace<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The shortest time between two rounds of writes.
    package let interval: Duration
    /// When the last round of writes went out.
    private var last: Instant? = nil

    /// At most 60 rounds of writes a second, as often as a display shows a new frame: a page
    /// shows every event it would have shown without the pace.
    package static var defaultInterval: Duration { .seconds(1) / 60 }

    /// A pace of one round of writes per `interval` at most.
    package init(interval: Duration = Self.defaultInterval) {
        self.interval = interval
    }

    /// How long writes asked for at `now` wait: zero when the last round went out at least
    /// `interval` before `now`.
    package func delay(at now: Instant) -> Duration {
        guard let last else { return .zero }
        let wait = now.duration(to: last.advanced(by: interval))
        return wait > .zero ? wait : .zero
    }

    /// A round of writes went out at `now`.
    package mutating func wrote(at now: Instant) {
        last = now
    }
}
