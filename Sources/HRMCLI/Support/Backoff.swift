/// Reconnect delays: 0.5 s, doubling, at most 5 s; back to the start after a success.
struct Backoff: Sendable {
    let initial: Duration
    let maximum: Duration
    private(set) var next: Duration

    init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
        self.next = initial
    }

    /// The delay before the next attempt; each call doubles the one after, up to the maximum.
    mutating func delay() -> Duration {
        let current = next
        next = min(next * 2, maximum)
        return current
    }

    mutating func reset() {
        next = initial
    }

    /// Sleeps the next delay (`delay()`) on `clock`; throws `CancellationError` when cancelled.
    mutating func sleep(on clock: some Clock<Duration> = ContinuousClock()) async throws {
        try await clock.sleep(for: delay())
    }
}
