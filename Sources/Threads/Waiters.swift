public import Synchronization

/// Tasks waiting for a condition that their owner's lock guards ("the last client has gone",
/// "every call has been handled"): kept in the owner's locked state, resumed together by the owner
/// once the condition holds (`takeAll`), and each at once when its task is cancelled. Waiting is
/// `Mutex.wait(in:until:)`: woken, never polled.
public struct Waiters: Sendable {
    private var parked: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextTicket = 0

    /// No one waiting.
    public init() {}

    /// Every waiter, taken out: the owner resumes them, outside its lock, once the condition
    /// holds.
    public mutating func takeAll() -> [CheckedContinuation<Void, Never>] {
        defer { parked = [:] }
        return Array(parked.values)
    }

    /// How many wait now.
    public var count: Int { parked.count }

    fileprivate mutating func ticket() -> Int {
        defer { nextTicket += 1 }
        return nextTicket
    }

    fileprivate mutating func park(_ continuation: CheckedContinuation<Void, Never>, as ticket: Int) {
        parked[ticket] = continuation
    }

    fileprivate mutating func take(_ ticket: Int) -> CheckedContinuation<Void, Never>? {
        parked.removeValue(forKey: ticket)
    }
}

extension Mutex {
    /// Returns once `ready` holds for the value, waiting in its `waiters` until the owner resumes
    /// them (`Waiters.takeAll`, after a change that may make it hold); or at once when the task is
    /// cancelled, so that a caller can bound the wait. Readiness and cancellation are both read
    /// under the lock, so neither a change nor a cancellation can slip in unseen.
    public borrowing func wait(
        in waiters: any WritableKeyPath<Value, Waiters> & Sendable, until ready: (borrowing Value) -> Bool
    ) async {
        let ticket = withLock { $0[keyPath: waiters].ticket() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = withLock { value -> Bool in
                    if ready(value) || Task.isCancelled { return true }
                    value[keyPath: waiters].park(continuation, as: ticket)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            withLock { $0[keyPath: waiters].take(ticket) }?.resume()
        }
    }
}
