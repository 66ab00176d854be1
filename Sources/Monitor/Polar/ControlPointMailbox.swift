import Synchronization

/// The values a PMD control point indicates (command responses), handed from the notification
/// session's thread to the one task that sends commands and waits for their answers, each wait
/// bounded by a timeout.
package final class ControlPointMailbox: Sendable {
    private struct State {
        var values: [[UInt8]] = []
        var waiter: CheckedContinuation<[UInt8]?, Never>? = nil
        var closed = false
    }

    private let state = Mutex(State())

    /// An empty mailbox.
    package init() {}

    /// A value from the control point (called on the notification session's thread).
    package func deliver(_ value: [UInt8]) {
        let waiter: CheckedContinuation<[UInt8]?, Never>? = state.withLock { state in
            guard !state.closed else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            // Responses come one per command; a sensor that floods is not waited for.
            if state.values.count < 64 { state.values.append(value) }
            return nil
        }
        waiter?.resume(returning: value)
    }

    /// The notifications ended (the link dropped): every wait returns nil from now on.
    package func close() {
        let waiter = state.withLock { state in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Forgets values that came before the command about to be sent.
    package func drain() {
        state.withLock { $0.values.removeAll() }
    }

    /// The next value, or nil when none came within `timeout`, the mailbox closed or the task
    /// was cancelled. One waiter at a time.
    package func next(timeout: Duration) async -> [UInt8]? {
        await withTaskGroup(of: [UInt8]?.self) { group in
            group.addTask { await self.take() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.giveUp()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // The other child ends at once: a waiter was resumed, or the sleep was cancelled.
            self.giveUp()
            return first
        }
    }

    private func take() async -> [UInt8]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
                let ready: [UInt8]?? = state.withLock { state in
                    if !state.values.isEmpty { return .some(state.values.removeFirst()) }
                    if state.closed || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            giveUp()
        }
    }

    /// Resumes the waiter, if any, with nil.
    private func giveUp() {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
