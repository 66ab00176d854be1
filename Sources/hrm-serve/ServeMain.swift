import ArgumentParser
import HRMCLI
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import Outputs
import Threads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `hrm-serve`: what `hrm serve` runs. The same options as `hrm serve` (both parse `WatchArguments`
/// and `ServeArguments`).
struct ServeMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrm serve", abstract: ServeCommand.configuration.abstract,
        discussion: ServeCommand.configuration.discussion, version: HRM.configuration.version)

    @OptionGroup var arguments: WatchArguments
    @OptionGroup(title: "Serving") var serve: ServeArguments

    /// How long the web server gets to stop after that; then hrm-serve exits all the same.
    static let serverGrace: Duration = .seconds(2)

    mutating func run() async throws {
        serve.log.start()
        let file = try arguments.applyConfigFile(command: "serve")
        serve.fill(from: file)
        let feed = LiveFeed()
        let metrics = SessionMetrics()
        let hub = ClientHub(feed: feed, maximum: serve.maxClients, verbose: serve.verbose)
        let machine = MachineNames()
        let policy = AccessPolicy(serve, machine: machine)
        let waiters = HeadWaiters { channel in
            hub.refused(
                "closed the connection of \(RequestGate.peer(channel)): more than \(HeadWaiters.limit) connections were waiting for a request head (a slowloris?)",
                kind: "waiting")
        }
        let library = WorkerThread(named: "hrm-serve-library")
        defer { library.stop() }
        let server = Server(
            hub: hub, metrics: metrics, settings: serve, policy: policy, waiters: waiters, library: library)
        let address = serve.address
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Int?.self)
        let app = Application(
            router: server.router(),
            server: server.builder(),
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: address.port), serverName: nil,
                // Room for refusals and page loads beside the feed clients; past that, connections
                // wait in the backlog.
                availableConnectionsDelegate: MaximumAvailableConnections(serve.maxClients + 64)),
            onServerRunning: { channel in boundContinuation.yield(channel.localAddress?.port ?? address.port)
            },
            // One event loop thread: a few hundred events a second to a few dozen clients is little
            // work for one, and each thread more is a stack and a malloc arena resident.
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup(numberOfThreads: 1)),
            logger: Logger(label: "hrm-serve", factory: { _ in SwiftLogNoOpLogHandler() }))
        let serving = Task {
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                ServeSession.log(Self.bindFailure(error, address))
            }
            boundContinuation.yield(nil)
        }
        // Listening before the strap is touched: a port in use is an error now, exit 69.
        var port: Int? = nil
        for await result in bound {
            port = result
            break
        }
        guard let port else { throw ExitCode(69) }
        var shown = address
        shown.port = port
        ServeSession.log(Self.listening(shown, hostName: machine.hostName))
        let ticker = Task { await hub.runTicker() }
        // Ctrl-C, SIGTERM or a limit: the clients go first (1.5 s at most), then the strap is
        // let go as watch lets it go.
        let closeClients: @Sendable () async -> Void = { await hub.closeAll(grace: ClientHub.shutdownGrace) }
        let status =
            if let team = serve.mqttTeam {
                await TeamFeed.run(team, limits: arguments.limits, feed: feed, whenStopped: closeClients)
            } else {
                await ServeSession.run(
                    arguments, record: serve.record, feed: feed, metrics: metrics, whenStopped: closeClients)
            }
        await hub.closeAll(grace: ClientHub.shutdownGrace)
        ticker.cancel()
        serving.cancel()
        if await !Self.finished(serving, within: Self.serverGrace), serve.verbose {
            ServeSession.log("the web server did not stop within \(Self.serverGrace); exiting all the same")
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// True when `task` ended within `limit` (awaiting a task's value cannot be cancelled: this
    /// does not wait for it past the limit).
    static func finished(_ task: Task<Void, Never>, within limit: Duration) async -> Bool {
        let (first, continuation) = AsyncStream.makeStream(of: Bool.self)
        let waiter = Task {
            await task.value
            continuation.yield(true)
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            continuation.yield(false)
        }
        defer {
            waiter.cancel()
            timer.cancel()
        }
        for await done in first { return done }
        return false
    }

    /// The log line people click: the address listened on; on every interface, that it is so and
    /// the machine's name to reach it by.
    static func listening(_ address: ListenAddress, hostName: String?) -> String {
        let feeds = "(feed: /events, /ws; snapshot: /api/current; metrics: /metrics; trends: /trends)"
        guard address.isEveryInterface else { return "listening on \(address.url) \(feeds)" }
        var reach = ListenAddress(host: "127.0.0.1", port: address.port).url
        if let hostName { reach = ListenAddress(host: hostName, port: address.port).url + ", " + reach }
        return
            "listening on \(address.url): every interface, anyone who can reach this machine: \(reach) \(feeds)"
    }

    /// Why the address could not be had, for people.
    static func bindFailure(_ error: any Error, _ address: ListenAddress) -> String {
        if let error = error as? IOError {
            switch error.errnoCode {
            case EADDRINUSE:
                return
                    "cannot listen on \(address): the address is in use (another hrm serve?); choose another port with --listen"
            case EACCES:
                return "cannot listen on \(address): permission denied (ports below 1024 need privileges)"
            case EADDRNOTAVAIL:
                return "cannot listen on \(address): \(address.host) is not an address of this machine"
            default:
                break
            }
        }
        return "cannot listen on \(address): \(error)"
    }
}
