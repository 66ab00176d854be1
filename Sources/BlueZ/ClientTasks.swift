import Synchronization

/// The tasks a client starts where no caller's task can own them: from a stream's end, a notify
/// socket's end, a relay that lasts as long as a stream it returned. Each is kept here until it
/// ends; `close()` cancels those still running and waits for them, so none outlives its client.
/// One started after that runs cancelled (its cleanup still done, at once) and is not kept.
final class ClientTasks: Sendable {
    private struct State {
        var next = 0
        var running: [Int: Task<Void, Never>] = [:]
        /// Tasks that ended before they were kept (then they never are).
        var ended: Set<Int> = []
        var closed = false
    }
    private let state = Mutex(State())

    /// Starts `body` in a task of its own, kept until it ends; returns its handle for a caller
    /// that also waits for it.
    @discardableResult
    func run(_ body: sending @escaping () async -> Void) -> Task<Void, Never> {
        let id = state.withLock { state -> Int? in
            guard !state.closed else { return nil }
            state.next += 1
            return state.next
        }
        guard let id else {
            let task = Task { await body() }
            task.cancel()
            return task
        }
        let task = Task {
            await body()
            self.ended(id)
        }
        let kept = state.withLock { state -> Bool in
            // Over already: nothing to keep.
            if state.ended.remove(id) != nil { return true }
            guard !state.closed else { return false }
            state.running[id] = task
            return true
        }
        // close() came in between: it runs cancelled, as if started after.
        if !kept { task.cancel() }
        return task
    }

    private func ended(_ id: Int) {
        state.withLock { state in
            if state.running.removeValue(forKey: id) == nil { state.ended.insert(id) }
        }
    }

    /// How many are still running (a test's window).
    var count: Int { state.withLock { $0.running.count } }

    /// Cancels every task still running and waits until each has ended; later ones run cancelled.
    func close() async {
        let running = state.withLock { state in
            state.closed = true
            defer { state.running = [:] }
            return Array(state.running.values)
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}
