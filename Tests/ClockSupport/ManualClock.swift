import Synchronization

/// A clock that stands still until a test moves it: code written against `some Clock<Duration>`
/// (or `any Clock<Duration>`) sleeps on it, and the test decides when each sleep ends, so no test
/// waits in wall time for a timer to fire and a loaded machine changes nothing.
///
/// The usual shape: start the code under test, `await clock.sleepers(1)` until it is asleep (a
/// generous wall-clock deadline there only proves "not hung"), `advance(by:)` to just before its
/// deadline (it still sleeps), then to its deadline (it wakes). `advance` wakes the sleepers due
/// in the order of their deadlines (ties in the order they fell asleep), each with `now` set to
/// its own deadline, so a woken task that reads `now` sees the instant it asked for; the clock
/// ends at the target. A task woken that sleeps again is asleep only once it has run that far:
/// wait for it with `sleepers(_:)` before advancing again.
///
/// Cancelling a sleeping task ends its sleep at once with `CancellationError`, as
/// `ContinuousClock` does; a sleep whose deadline has passed returns at once. Swift-clocks'
/// `TestClock` does this too, but its offline release needs a newer toolchain than hrm's.
public final class ManualClock: Clock, Sendable {
    /// A point on the manual clock: how far it is from the clock's start.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The time since the clock's start.
        public let offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `milliseconds` after the clock's start: a test's timeline, written short.
        public static func at(_ milliseconds: Int64) -> Instant {
            Instant(offset: .milliseconds(milliseconds))
        }

        /// The instant `duration` after this one.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        /// Earlier first.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

        /// The offset, as `Duration` prints it.
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        let id: Int
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var watchers: [Watcher] = []
        /// Watchers whose deadline passed before they were listed.
        var expired: Set<Int> = []
        var nextID = 0

        /// The watchers whose count of sleepers is reached, taken out.
        mutating func satisfiedWatchers() -> [Watcher] {
            let count = sleepers.count
            let satisfied = watchers.filter { $0.count <= count }
            watchers.removeAll { $0.count <= count }
            return satisfied
        }
    }

    private let state = Mutex(State())

    /// A clock at its start (`Instant(offset: .zero)`), with nobody asleep.
    public init() {}

    /// Where the clock stands.
    public var now: Instant { state.withLock { $0.now } }

    /// Any duration can be waited for exactly.
    public var minimumResolution: Duration { .zero }

    /// How many tasks sleep on this clock now.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines of the tasks asleep, earliest first: what a test would wake by advancing.
    public var deadlines: [Instant] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    /// Sleeps until the test has advanced the clock to `deadline` (or past it); at once when it is
    /// there already. Throws `CancellationError` when the task is or becomes cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> Int? in
            guard deadline > state.now else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, watchers) = state.withLock { state -> (Outcome, [Watcher]) in
                    if Task.isCancelled { return (.cancelled, []) }
                    // Advanced past it between the check above and here.
                    if deadline <= state.now { return (.due, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (.asleep, state.satisfiedWatchers())
                }
                switch outcome {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .due: continuation.resume()
                case .asleep: break
                }
                watchers.forEach { $0.continuation.resume(returning: true) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    private enum Outcome { case cancelled, due, asleep }

    /// Moves the clock `duration` on, waking every sleeper whose deadline it reaches, earliest
    /// first. Returns how many it woke.
    @discardableResult
    public func advance(by duration: Duration) -> Int {
        precondition(duration >= .zero, "a clock does not go back")
        let target = now.advanced(by: duration)
        return advance(to: target)
    }

    /// Moves the clock to `target` (never back), waking every sleeper whose deadline it reaches,
    /// earliest first. Returns how many it woke.
    @discardableResult
    public func advance(to target: Instant) -> Int {
        var woken = 0
        while true {
            let due = state.withLock { state -> Sleeper? in
                let ready = state.sleepers.indices.filter { state.sleepers[$0].deadline <= target }
                // The earliest deadline; among equal ones, the first to fall asleep.
                guard let first = ready.min(by: { state.sleepers[$0].deadline < state.sleepers[$1].deadline })
                else {
                    state.now = max(state.now, target)
                    return nil
                }
                let sleeper = state.sleepers.remove(at: first)
                state.now = max(state.now, sleeper.deadline)
                return sleeper
            }
            guard let due else { return woken }
            due.continuation.resume()
            woken += 1
        }
    }

    /// Waits until at least `count` tasks sleep on this clock: true then, false when `deadline`
    /// (wall time, generous: it only proves "not hung") passed first.
    public func sleepers(_ count: Int, within deadline: Duration = .seconds(30)) async -> Bool {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let timeout = Task {
            // Cancelled: the count was reached.
            guard (try? await Task.sleep(for: deadline)) != nil else { return }
            let watcher = state.withLock { state -> Watcher? in
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else {
                    state.expired.insert(id)
                    return nil
                }
                return state.watchers.remove(at: index)
            }
            watcher?.continuation.resume(returning: false)
        }
        defer { timeout.cancel() }
        return await withCheckedContinuation { continuation in
            let reached = state.withLock { state -> Bool? in
                if state.sleepers.count >= count { return true }
                if state.expired.remove(id) != nil { return false }
                state.watchers.append(Watcher(id: id, count: count, continuation: continuation))
                return nil
            }
            if let reached { continuation.resume(returning: reached) }
        }
    }
}
