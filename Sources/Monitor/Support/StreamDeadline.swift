extension AsyncStream where Element: Sendable {
    /// This stream's elements until `deadline` (or all of them, when nil). Ending the result early
    /// ends the consumption of this stream, and so its producer's work (StopDiscovery, StopNotify).
    /// `clock` is what tests move by hand.
    package func until<C: Clock<Duration>>(_ deadline: C.Instant?, on clock: C = ContinuousClock())
        -> AsyncStream<
            Element
        >
    {
        guard let deadline else { return self }
        let (limited, continuation) = AsyncStream.makeStream(of: Element.self)
        let relay = Task {
            for await element in self { continuation.yield(element) }
            continuation.finish()
        }
        let timer = Task {
            try? await clock.sleep(until: deadline, tolerance: nil)
            continuation.finish()
        }
        continuation.onTermination = { _ in
            relay.cancel()
            timer.cancel()
        }
        return limited
    }
}

/// An element of a stream, or a tick of the clock beside it.
package enum Ticked<Element: Sendable>: Sendable {
    case element(Element)
    case tick
}

extension AsyncStream where Element: Sendable {
    /// This stream's elements and, beside them, a `.tick` every `interval` (none when nil): for
    /// a loop that must also act when nothing arrives (a timer to redraw, a choice to make).
    /// Ending the result ends the consumption of this stream. `clock` is what tests move by hand.
    package func ticking(
        every interval: Duration?, on clock: some Clock<Duration> = ContinuousClock()
    ) -> AsyncStream<Ticked<Element>> {
        let (ticked, continuation) = AsyncStream<Ticked<Element>>.makeStream()
        let relay = Task {
            for await element in self { continuation.yield(.element(element)) }
            continuation.finish()
        }
        let ticker = Task {
            guard let interval else { return }
            while !Task.isCancelled {
                try? await clock.sleep(for: interval)
                continuation.yield(.tick)
            }
        }
        continuation.onTermination = { _ in
            relay.cancel()
            ticker.cancel()
        }
        return ticked
    }
}
