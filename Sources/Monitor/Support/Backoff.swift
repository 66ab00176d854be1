/// Reconnect delays: 0.5 s, doubling, at most 5 s; back to the start after a success.
package struct Backoff: Sendable {
    package let initial: Duration
    package let maximum: Duration
    package private(set) var next: Duration

    package init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
        self.next = initial
    }

    /// The delay before the next attempt; each call doubles the one after, up to the maximum.
    package mutating func delay() -> Duration {
        let current = next
        next = min(next * 2, maximum)
        return current
    }

    package mutating func reset() {
        next = initial
    }

    /// Sleeps the next delay (`delay()`) on `clock`; throws `CancellationError` when cancelled.
    package mutating func sleep(on clock: some Clock<Duration> = ContinuousClock()) async throws {
        try await clock.sleep(for: delay())
    }
}
