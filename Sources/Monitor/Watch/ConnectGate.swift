import Synchronization

/// One Connect in flight per adapter: real controllers refuse a second LE connection attempt
/// while one is pending (`org.bluez.Error.InProgress`), so the straps on one adapter take turns,
/// first come first served. A turn ends when the link is up (or the attempt failed), never while
/// a strap streams.
package final class ConnectGate: Sendable {
    private struct Waiter {
        package let id: Int
        package let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        /// Straps of this session with a link up on the adapter.
        package var links = 0
        package var busy = false
        package var waiters: [Waiter] = []
        package var nextID = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Straps waiting for a turn: a strap whose strap is away cuts its Connect short when others
    /// wait, rather than holding the adapter for the 40 s BlueZ may take to give up.
    package var waiting: Int { state.withLock { $0.waiters.count } }

    /// Links this session's straps hold on the adapter: when a Connect fails while others hold
    /// links, the adapter may have no room for another (BlueZ reports a full controller as a
    /// routine abort).
    package var links: Int { state.withLock { $0.links } }

    package func linkUp() { state.withLock { $0.links += 1 } }
    package func linkDown() { state.withLock { $0.links = max($0.links - 1, 0) } }

    /// Runs `body` in this adapter's turn; nil without running it when the task is cancelled
    /// while waiting.
    package func withTurn<T, E: Error>(_ body: () async throws(E) -> T) async throws(E) -> T? {
        guard await enter() else { return nil }
        defer { leave() }
        return try await body()
    }

    /// Waits for the turn; false when cancelled first (the turn is not taken then).
    private func enter() async -> Bool {
        let id = state.withLock { state -> Int? in
            guard state.busy else {
                state.busy = true
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if cancelled { continuation.resume(returning: false) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Hands the turn to the next waiter, if any.
    private func leave() {
        let next = state.withLock { state -> Waiter? in
            guard !state.waiters.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume(returning: true)
    }
}
