import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Ctrl-C (SIGINT) and SIGTERM as a request to stop, not a kill: `scan` and `watch` run their work
/// in a task that these signals cancel, so it can stop discovery, release notifications,
/// disconnect and say what it found before the process exits.
enum Interruption {
    static func cancelling<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) async -> Result {
        let task = Task { await body() }
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
        let result = await task.value
        sources.forEach { $0.cancel() }
        return result
    }
}
