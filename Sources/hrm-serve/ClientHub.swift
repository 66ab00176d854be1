import HRMCLI
import NIOCore
import Outputs
import Synchronization
import Threads

/// Every feed client, counted against `--max-clients`: they join and leave here, a ticker drops
/// those whose writes wait too long and keeps idle SSE streams alive, and they are closed together
/// when the session stops.
final class ClientHub: Sendable {
    /// A write that waits this long means the client stopped reading: it is dropped.
    static let stallSeconds = 5
    static let stallLimit: Duration = .seconds(stallSeconds)
    /// An SSE comment this often: proxies and browsers give up on a silent stream.
    static let keepAliveInterval: Duration = .seconds(15)
    /// How often the ticker looks.
    static let tick: Duration = .seconds(1)
    /// A refusal of the same kind is logged at most this often.
    static let refusalLogInterval: Duration = .seconds(10)

    let feed: LiveFeed
    let maximum: Int
    let verbose: Bool

    private struct State {
        var clients: [FeedClient] = []
        var closed = false
        var lastRefusalLogged: [String: ContinuousClock.Instant] = [:]
        var lastKeepAlive = ContinuousClock.now
        /// Waiting for the last client to go (`waitUntilEmpty`).
        var emptyWaiters = Waiters()

        /// The waiters to wake when no client is left.
        mutating func wakeIfEmpty() -> [CheckedContinuation<Void, Never>] {
            clients.isEmpty ? emptyWaiters.takeAll() : []
        }
    }
    private let state = Mutex(State())
    /// Each event's bytes, made once for every client.
    private let messages = FeedMessages()
    /// A writer per event loop, made as clients come.
    private let writers = Mutex([ObjectIdentifier: LoopWriter]())

    init(feed: LiveFeed, maximum: Int, verbose: Bool) {
        self.feed = feed
        self.maximum = maximum
        self.verbose = verbose
    }

    /// A new client with the lines it gets first (the current state), or nil when the cap is
    /// reached or the session is stopping.
    func join(_ kind: FeedClient.Kind, channel: any Channel) -> (client: FeedClient, current: [String])? {
        let loop = channel.eventLoop
        let writer = writers.withLock { writers in
            if let writer = writers[ObjectIdentifier(loop)] { return writer }
            let writer = LoopWriter(loop: loop)
            writers[ObjectIdentifier(loop)] = writer
            return writer
        }
        let client = FeedClient(kind: kind, channel: channel, messages: messages, loop: writer)
        let count = state.withLock { state -> Int? in
            guard state.clients.count < maximum, !state.closed else { return nil }
            state.clients.append(client)
            return state.clients.count
        }
        guard let count else {
            refused(
                "refused \(kind.aClient) from \(client.peer): \(maximum) already (--max-clients), 503",
                kind: "full")
            return nil
        }
        let current = feed.add(client)
        // However the connection ends (even before its handler ran), the client goes with it.
        channel.closeFuture.whenComplete { [self] _ in leave(client) }
        if verbose { ServeSession.log("\(kind.rawValue) client \(client.peer) joined (\(count) now)") }
        return (client, current)
    }

    /// True when a new client would be refused (the WebSocket upgrade asks before it is made).
    var isFull: Bool { state.withLock { $0.clients.count >= maximum || $0.closed } }

    /// The client is gone (its handler ended, or its connection closed; the first of the two).
    func leave(_ client: FeedClient) {
        client.gone()
        let (count, waiters) = state.withLock { state -> (Int?, [CheckedContinuation<Void, Never>]) in
            guard let index = state.clients.firstIndex(where: { $0 === client }) else { return (nil, []) }
            state.clients.remove(at: index)
            return (state.clients.count, state.wakeIfEmpty())
        }
        for waiter in waiters { waiter.resume() }
        guard let count else { return }
        feed.remove(client)
        guard verbose else { return }
        let how =
            switch client.ending {
            case .fellBehind: "dropped: it fell \(FeedClient.capacity) events behind"
            case .stalled: "dropped: a write waited more than \(Self.stallSeconds) s (it stopped reading)"
            case .shutdown: "closed: hrm serve is stopping"
            case nil: "left"
            }
        ServeSession.log("\(client.kind.rawValue) client \(client.peer) \(how) (\(count) now)")
    }

    var count: Int { state.withLock { $0.clients.count } }

    /// How long the clients get to go once the session stops, before their connections are closed
    /// (one that does not read would otherwise keep its connection until it is dropped).
    static let shutdownGrace: Duration = .seconds(1)

    /// The session is stopping: no new clients, and every stream ends after what is queued; the
    /// connections of those still there after `shutdownGrace` are closed.
    func finishAll() {
        let (clients, first) = state.withLock { state in
            defer { state.closed = true }
            return (state.clients, !state.closed)
        }
        for client in clients { client.finish() }
        guard first else { return }
        Task { [self] in
            try? await Task.sleep(for: Self.shutdownGrace)
            for client in state.withLock({ $0.clients }) { client.close() }
        }
    }

    /// After `finishAll`: waits up to `grace` for the clients to go, closes the connections of
    /// those still there (a client that does not read), and waits a little for them to go too.
    func closeAll(grace: Duration) async {
        finishAll()
        if await waitUntilEmpty(within: grace) { return }
        for client in state.withLock({ $0.clients }) { client.close() }
        _ = await waitUntilEmpty(within: .milliseconds(500))
    }

    /// Whether the last client went within `limit`: woken by `leave`, not by polling.
    private func waitUntilEmpty(within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { [self] in
                await emptied()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let gone = await group.next() ?? false
            group.cancelAll()
            return gone || count == 0
        }
    }

    /// Returns once no client is left, or at once when cancelled.
    private func emptied() async {
        await state.wait(in: \.emptyWaiters) { $0.clients.isEmpty }
    }

    /// Drops clients whose write has waited too long; queues a keep-alive for SSE clients now and
    /// then. Runs until cancelled.
    func runTicker() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.tick)
            tick(now: .now)
        }
    }

    func tick(now: ContinuousClock.Instant) {
        let (clients, keepAlive) = state.withLock { state in
            let due = now - state.lastKeepAlive >= Self.keepAliveInterval
            if due { state.lastKeepAlive = now }
            return (state.clients, due)
        }
        for client in clients {
            if client.stalled(longerThan: Self.stallLimit, now: now) {
                client.drop(.stalled)
            } else if keepAlive, client.kind == .sse {
                client.keepAlive()
            }
        }
    }

    /// A refused request on stderr, a kind at most every `refusalLogInterval` (a page retrying in
    /// a loop must not flood the log).
    func refused(_ text: String, kind: String) {
        let now = ContinuousClock.now
        let log = state.withLock { state -> Bool in
            if let last = state.lastRefusalLogged[kind], now - last < Self.refusalLogInterval { return false }
            state.lastRefusalLogged[kind] = now
            return true
        }
        if log { ServeSession.log(text) }
    }
}
