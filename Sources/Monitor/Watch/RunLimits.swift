/// `--count` and `--duration`: both end the session through its `SessionStop`, as Ctrl-C does.
package struct RunLimits: Sendable {
    package var count: Int?
    package var duration: Seconds?

    /// Counts the session's measurements and stops it at `count`.
    package func counter(_ stop: SessionStop) -> SessionCounter {
        SessionCounter(limit: count, stop: stop)
    }

    /// Stops the session `duration` after `start` (scanning and connecting included); cancel the
    /// task when the session ends first. `clock` is what tests move by hand.
    package func timer<C: Clock<Duration>>(
        from start: C.Instant, on clock: C = ContinuousClock(), _ stop: SessionStop
    ) -> Task<Void, Never>? {
        guard let duration else { return nil }
        return Task {
            guard
                (try? await clock.sleep(until: start.advanced(by: duration.duration), tolerance: nil)) != nil
            else { return }
            stop.stop(.durationReached)
        }
    }

    /// Every stored property, as given.
    package init(count: Int? = nil, duration: Seconds? = nil) {
        self.count = count
        self.duration = duration
    }
}
