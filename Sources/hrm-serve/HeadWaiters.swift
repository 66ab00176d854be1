import NIOCore
import Synchronization

/// The connections waiting for a request head (new ones, and kept-alive ones between requests),
/// oldest first. At most `limit` wait: one more closes the one that has waited longest. A real
/// client sends its head within milliseconds of connecting; connections that trickle theirs
/// (slowloris) are the ones that wait, and they can no longer fill the server's connections and
/// keep real clients in the accept queue until their head deadlines pass.
final class HeadWaiters: Sendable {
    /// Well below the room `ServeMain` leaves beside the feed clients (64), so that the server
    /// always has connections left to accept real clients with.
    static let limit = 32

    /// One connection's wait.
    struct Ticket: Hashable, Sendable {
        fileprivate let number: UInt64
    }

    private struct State {
        var next: UInt64 = 0
        var waiting: [(number: UInt64, channel: any Channel)] = []
    }
    private let state = Mutex(State())
    private let evicted: @Sendable (any Channel) -> Void

    /// `evicted`: told of each connection closed to make room (for the log).
    init(evicted: @escaping @Sendable (any Channel) -> Void) {
        self.evicted = evicted
    }

    /// `channel` begins to wait for a head; the longest waiting is closed when too many wait.
    func enter(_ channel: any Channel) -> Ticket {
        let (ticket, oldest) = state.withLock { state -> (Ticket, (any Channel)?) in
            state.next += 1
            state.waiting.append((state.next, channel))
            let oldest = state.waiting.count > Self.limit ? state.waiting.removeFirst().channel : nil
            return (Ticket(number: state.next), oldest)
        }
        if let oldest {
            evicted(oldest)
            oldest.close(promise: nil)
        }
        return ticket
    }

    /// The head came (or the connection went).
    func leave(_ ticket: Ticket) {
        state.withLock { state in state.waiting.removeAll { $0.number == ticket.number } }
    }

    var count: Int { state.withLock { $0.waiting.count } }
}
