extension AsyncStream where Element: Sendable {
    /// This stream's elements until `deadline` (or all of them, when nil). Ending the result early
    /// ends the consumption of this stream, and so its producer's work (StopDiscovery, StopNotify).
    func until(_ deadline: ContinuousClock.Instant?) -> AsyncStream<Element> {
        guard let deadline else { return self }
        let (limited, continuation) = AsyncStream.makeStream(of: Element.self)
        let relay = Task {
            for await element in self { continuation.yield(element) }
            continuation.finish()
        }
        let timer = Task {
            try? await Task.sleep(until: deadline)
            continuation.finish()
        }
        continuation.onTermination = { _ in
            relay.cancel()
            timer.cancel()
        }
        return limited
    }
}
