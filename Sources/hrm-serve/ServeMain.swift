import ArgumentParser
import HRMCLI
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// `hrm-serve`: what `hrm serve` runs. The same options as `hrm serve` (both parse `WatchArguments`
/// and `ServeArguments`).
@main
struct ServeMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrm serve", abstract: ServeCommand.configuration.abstract,
        discussion: ServeCommand.configuration.discussion)

    @OptionGroup var arguments: WatchArguments
    @OptionGroup(title: "Serving") var serve: ServeArguments

    func run() async throws {
        let feed = LiveFeed()
        let hub = ClientHub(feed: feed, maximum: serve.maxClients, verbose: serve.verbose)
        let server = Server(hub: hub, settings: serve)
        let address = serve.address
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Bool.self)
        let app = Application(
            router: server.router(),
            server: .http1WebSocketUpgrade { request, _, _ in server.upgrade(request) },
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { _ in boundContinuation.yield(true) },
            logger: Logger(label: "hrm-serve", factory: { _ in SwiftLogNoOpLogHandler() }))
        let serving = Task {
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                ServeSession.log("cannot listen on \(address): \(error)")
            }
            boundContinuation.yield(false)
        }
        // Listening before the strap is touched: a port in use is an error now, exit 69.
        var listening = false
        for await result in bound {
            listening = result
            break
        }
        guard listening else { throw ExitCode(69) }
        ServeSession.log("listening on \(address.url)")
        let status = await ServeSession.run(arguments, feed: feed, whenStopped: { hub.closeAll() })
        hub.closeAll()
        serving.cancel()
        await serving.value
        if status != 0 { throw ExitCode(status) }
    }
}
