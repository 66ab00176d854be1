import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Mutex where Value: ~Copyable {
    /// `withLock`, but waiting `limit` at most: nil when the lock stayed taken (a sink stuck in a
    /// write to a stdout nobody reads). For the end of a session only: it polls, and it sleeps
    /// the thread rather than the task (whose cancellation would end `Task.sleep` at once).
    borrowing func withLock<Result>(
        waitingAtMost limit: Duration, _ body: (inout sending Value) -> sending Result
    ) -> Result? {
        let deadline = ContinuousClock.now + limit
        while true {
            if let result = withLockIfAvailable(body) { return result }
            if ContinuousClock.now >= deadline { return nil }
            usleep(10_000)
        }
    }
}
