import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one way a session ends before its work is done: `--count`, `--duration`, Ctrl-C, SIGTERM,
/// SIGHUP, a closed stdout and a lost bus all call `stop`, which cancels the session's task. Everything the session
/// runs observes that one cancellation (stops discovery, releases notifications, disconnects), so
/// no part finds out its own way. The first reason given is kept.
package final class SessionStop: Sendable {
    package enum Reason: Sendable, Equatable {
        /// Ctrl-C, SIGTERM or SIGHUP.
        case interrupted
        case countReached
        case durationReached
        /// Stdout's reader went away (`| head`).
        case outputClosed
        /// The connection to the system bus was lost: nothing more can be done.
        case busLost
        /// An output said the session's work is done (`hrm readiness`: the reading is complete).
        case finished
    }

    private struct State {
        package var reason: Reason? = nil
        package var cancel: (@Sendable () -> Void)? = nil
        package var first: [@Sendable () async -> Void] = []
    }

    private let state = Mutex(State())
    /// Called once when the session is stopped, before its task is cancelled: `hrm serve` closes
    /// its clients there, before the strap is let go.
    private let whenStopped: (@Sendable () async -> Void)?

    package init(whenStopped: (@Sendable () async -> Void)? = nil) {
        self.whenStopped = whenStopped
    }

    /// Why the session was stopped, or nil when nothing stopped it.
    package var reason: Reason? { state.withLock { $0.reason } }

    /// Adds what runs first when the session is stopped, before `whenStopped` and before the
    /// strap is let go: an output that others depend on takes itself back there (the relay
    /// unregisters from bluetoothd, so that no consumer sees a frozen value).
    package func beforeStopping(_ action: @escaping @Sendable () async -> Void) {
        state.withLock { $0.first.append(action) }
    }

    package func stop(_ reason: Reason) {
        let (cancel, first) = state.withLock {
            state -> ((@Sendable () -> Void)?, [@Sendable () async -> Void]) in
            guard state.reason == nil else { return (nil, []) }
            state.reason = reason
            return (state.cancel, state.first)
        }
        // Not here: cancelling runs the task's cancellation handlers on this thread, and `stop`
        // is called from inside the pipeline (under its lock, on the notification reader's
        // thread, within the BlueZ client's notify session lock), where a handler that takes one
        // of those locks (StopNotify's detach does) would deadlock.
        guard let cancel else { return }
        Task.detached { [whenStopped] in
            for action in first { await action() }
            await whenStopped?()
            cancel()
        }
    }

    /// Runs `body` in a task that `stop` cancels; Ctrl-C, SIGTERM and SIGHUP (the terminal went
    /// away) call `stop(.interrupted)`
    /// while it runs. A `stop` that came before the task existed cancels it at once.
    package func run<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) async -> Result {
        let task = Task { await body() }
        let stoppedEarly = state.withLock { state -> Bool in
            state.cancel = { task.cancel() }
            return state.reason != nil
        }
        if stoppedEarly { task.cancel() }
        let signals = [SIGINT, SIGTERM, SIGHUP]
        for number in signals { signal(number, SIG_IGN) }
        let sources = signals.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in stop(.interrupted) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        return await task.value
    }
}
