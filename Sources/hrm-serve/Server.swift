import HRMCLI
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import Outputs
import Threads

/// A request's context: Hummingbird's, and the connection (a feed client's connection is closed
/// from outside when the client is dropped).
struct FeedRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The routes: the page, the feed (SSE and WebSocket), the snapshot. Read-only; nothing here
/// changes anything. What may reach them is decided before, by `RequestGate`.
struct Server: Sendable {
    let hub: ClientHub
    /// What `/metrics` shows.
    let metrics: SessionMetrics
    let settings: ServeArguments
    let policy: AccessPolicy
    let waiters: HeadWaiters
    /// Where `/trends` reads the session library (files and SQLite block: never on the pool).
    let library: WorkerThread

    /// Request heads: a field at most 8 KiB, all of them 16 KiB, 100 fields (a browser sends a
    /// few hundred bytes). Beyond that: 431.
    static let decoderLimits = HTTP1Channel.Configuration.DecoderConfiguration(
        maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 100)

    func router() -> Router<FeedRequestContext> {
        let router = Router(context: FeedRequestContext.self)
        let page = Page.html.replacing("__OFFLINE_TEXT__", with: Self.escaped(settings.offlineText))
        router.get("/") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
        }
        router.get("/api/current") { request, _ in
            Response(
                status: .ok,
                headers: cors(request, [.contentType: "application/json", .cacheControl: "no-store"]),
                body: ResponseBody(byteBuffer: ByteBuffer(string: hub.feed.current() + "\n")))
        }
        router.get("/events") { request, context in
            guard let (client, current) = hub.join(.sse, channel: context.channel) else {
                return Self.text(.serviceUnavailable, AccessPolicy.full(hub.maximum))
            }
            return Response(
                status: .ok,
                headers: cors(request, [.contentType: "text/event-stream", .cacheControl: "no-store"]),
                body: ResponseBody { writer in
                    defer { hub.leave(client) }
                    // How soon a browser's EventSource comes back after the stream ends, then the
                    // current state in one write.
                    var first = "retry: 2000\n\n"
                    for line in current { first += "data: \(line)\n\n" }
                    try await client.writing { try await writer.write(ByteBuffer(string: first)) }
                    // The rest from the connection's event loop, until the stream ends.
                    client.goLive()
                    await client.ended()
                    try await writer.finish(nil)
                    // The stream ends only when hrm serve stops (or drops the client): the
                    // connection ends with it, once what is written has gone out.
                    context.channel.close(mode: .output, promise: nil)
                })
        }
        // Prometheus: the classic text format, or OpenMetrics when the scraper asks for it.
        router.get("/metrics") { request, _ in
            let openMetrics = MetricsExposition.wantsOpenMetrics(request.headers[.accept])
            return Response(
                status: .ok,
                headers: [
                    .contentType: openMetrics
                        ? MetricsExposition.openMetricsType : MetricsExposition.textType,
                    .cacheControl: "no-store",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render(openMetrics: openMetrics))))
        }
        // The session library's figures as SVG charts, drawn here (no script).
        router.get("/trends") { request, _ in
            let query = request.uri.queryParameters
            let (days, by, device) = (query.get("days"), query.get("by"), query.get("device"))
            let today = TrendsPage.today
            let page = await library.run {
                TrendsPage.response(days: days, by: by, device: device, today: today, log: ServeSession.log)
            }
            return Response(
                status: HTTPResponse.Status(code: page.status),
                headers: [
                    .contentType: page.isHTML ? "text/html; charset=utf-8" : "text/plain; charset=utf-8",
                    .cacheControl: "no-store",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(string: page.body)))
        }
        // A plain GET (the upgrade itself is taken before the routes).
        router.get("/ws") { _, _ in
            Self.text(
                .upgradeRequired,
                AccessPolicy.Refusal(
                    status: .upgradeRequired, text: "hrm serve: /ws is a WebSocket (ws://HOST:PORT/ws)",
                    headers: [("Upgrade", "websocket")]))
        }
        return router
    }

    /// The HTTP/1 server with the WebSocket upgrade, the gate in front.
    func builder() -> HTTPServerBuilder {
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: HTTP1Channel.Configuration(
                idleTimeout: .seconds(30), httpDecoderConfiguration: Self.decoderLimits),
            ws: WebSocketServerConfiguration(
                maxFrameSize: 16 * 1024, autoPing: .enabled(timePeriod: .seconds(30)),
                closeTimeout: .seconds(1)))
        return HTTPServerBuilder { [self] responder in
            FeedServerChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, configuration: configuration,
                    shouldUpgrade: { request, channel, _ in upgrade(request, channel: channel) }),
                policy: policy, hub: hub, waiters: waiters)
        }
    }

    /// The WebSocket upgrade. `RequestGate` has refused already what is refused with a reason
    /// (another path, a foreign origin, a full house); this is the last word all the same (the
    /// cap may have been reached in between: then it is Hummingbird's 400).
    func upgrade(_ request: HTTPRequest, channel: any Channel) -> ShouldUpgradeResult<
        WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
    > {
        let path = request.path.map { $0.split(separator: "?", maxSplits: 1).first.map(String.init) ?? $0 }
        guard path == "/ws", policy.originAllowed(request.headerFields[.origin], host: request.authority),
            let (client, current) = hub.join(.webSocket, channel: channel)
        else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            defer { hub.leave(client) }
            await withTaskGroup(of: Void.self) { group in
                // The client's frames: its pings answered and its close seen there; data is ignored.
                group.addTask {
                    do { for try await _ in inbound {} } catch {}
                }
                // The feed, written from the connection's event loop, until the stream ends.
                group.addTask {
                    client.goLive(first: current.map(FeedMessages.webSocket))
                    await client.ended()
                }
                // Either ends the other: the client went, or its feed ended (dropped, or shutdown).
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// `Access-Control-Allow-Origin` for a page of an `--allow-origin` origin (a page of the
    /// server's own origin needs none; any other is kept out by the browser).
    func cors(_ request: Request, _ fields: HTTPFields) -> HTTPFields {
        var fields = fields
        if let origin = request.headers[.origin],
            policy.allowedOrigins.contains(AccessPolicy.normalised(origin))
        {
            fields[.accessControlAllowOrigin] = origin
            fields[.vary] = "Origin"
        }
        return fields
    }

    static func text(_ status: HTTPResponse.Status, _ refusal: AccessPolicy.Refusal) -> Response {
        var fields: HTTPFields = [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"]
        for (name, value) in refusal.headers {
            if let name = HTTPFields.Element.Name(name) { fields[name] = value }
        }
        return Response(
            status: status, headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(string: refusal.text + "\n")))
    }

    /// For the page's script: a JSON string's contents, safe inside a <script> element.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            default:
                if scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
