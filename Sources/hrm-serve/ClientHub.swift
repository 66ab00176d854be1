import HRMCLI
import Synchronization

/// Every feed client, counted against `--max-clients`, and closed together when the session stops.
final class ClientHub: Sendable {
    let feed: LiveFeed
    let maximum: Int
    let verbose: Bool
    private let clients = Mutex<[FeedClient]>([])
    private let closed = Mutex(false)

    init(feed: LiveFeed, maximum: Int, verbose: Bool) {
        self.feed = feed
        self.maximum = maximum
        self.verbose = verbose
    }

    /// A new client with the current state queued first, or nil when the cap is reached or the
    /// session is stopping.
    func join(_ what: String) -> (client: FeedClient, current: [String])? {
        let client = FeedClient()
        let admitted = clients.withLock { clients -> Bool in
            guard clients.count < maximum, !closed.withLock({ $0 }) else { return false }
            clients.append(client)
            return true
        }
        guard admitted else { return nil }
        let current = feed.add(client)
        if verbose { ServeSession.log("\(what) client joined (\(count) now)") }
        return (client, current)
    }

    func leave(_ client: FeedClient, _ what: String) {
        feed.remove(client)
        clients.withLock { $0.removeAll { $0 === client } }
        if verbose {
            ServeSession.log(
                "\(what) client \(client.fellBehind ? "dropped: it fell behind" : "left") (\(count) now)")
        }
    }

    var count: Int { clients.withLock { $0.count } }

    /// The session is stopping: no new clients, and every stream ends.
    func closeAll() {
        closed.withLock { $0 = true }
        for client in clients.withLock({ $0 }) { client.close() }
    }
}
