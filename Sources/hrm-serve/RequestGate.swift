import Foundation
import HRMCLI
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Who may ask what. Everything here is read-only, so the questions are only whether a page of
/// another site may read the feed (the WebSocket's `Origin`; the same-origin policy keeps it from
/// reading `/events` and `/api/current` without CORS), whether a request is really for this
/// server (`Host`, against DNS rebinding) and how big a request may be.
struct AccessPolicy: Sendable {
    /// `--allow-origin`, lowercased.
    let allowedOrigins: Set<String>
    /// The hosts of those origins: a reverse proxy's name is a Host to answer.
    let allowedHosts: Set<String>
    /// Listening on loopback: only requests for a loopback name are answered.
    let loopbackOnly: Bool
    /// The longest request target (path and query).
    static let maxTarget = 2048

    init(_ settings: ServeArguments) {
        allowedOrigins = Set(settings.allowOrigin.map { Self.normalised($0) })
        allowedHosts = Set(allowedOrigins.compactMap { Self.hostname(ofOrigin: $0) })
        loopbackOnly = Self.isLoopback(settings.address.host)
    }

    /// A request turned away before any route sees it.
    struct Refusal: Sendable {
        var status: HTTPResponseStatus
        var text: String
        var headers: [(String, String)] = []
        /// A line for stderr (everyone's, not only `--verbose`'s), and its kind (each kind at
        /// most every 10 s).
        var log: (kind: String, text: String)? = nil
    }

    /// nil when `head` may go on to the routes (or the WebSocket upgrade).
    func check(_ head: HTTPRequestHead, hub: ClientHub) -> Refusal? {
        if head.uri.utf8.count > Self.maxTarget {
            return Refusal(
                status: .uriTooLong, text: "hrm serve: a request target is at most \(Self.maxTarget) bytes")
        }
        guard head.method == .GET else {
            return Refusal(
                status: .methodNotAllowed, text: "hrm serve is read-only: GET only",
                headers: [("Allow", "GET")])
        }
        let length = head.headers.first(name: "content-length").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if (length != nil && length != "0") || head.headers.contains(name: "transfer-encoding") {
            return Refusal(status: .payloadTooLarge, text: "hrm serve takes no request body")
        }
        let hosts = head.headers["host"]
        if hosts.count > 1 { return Refusal(status: .badRequest, text: "hrm serve: more than one Host") }
        let host = hosts.first
        if let host, !hostAllowed(host) {
            return Refusal(
                status: .forbidden,
                text: """
                    hrm serve listens on loopback and answers only requests for localhost, 127.0.0.1 \
                    or [::1], not for '\(host)' (a guard against DNS rebinding). Open \
                    http://127.0.0.1:PORT/, or name the site with --allow-origin.
                    """,
                log: ("host", "refused a request for Host '\(host)': not a loopback name (403)"))
        }
        guard Self.isWebSocketUpgrade(head) else { return nil }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        guard path == "/ws" else {
            return Refusal(status: .notFound, text: "hrm serve: no WebSocket here; the feed is /ws")
        }
        let origin = head.headers.first(name: "origin")
        guard originAllowed(origin, host: host) else {
            let shown = origin ?? ""
            return Refusal(
                status: .forbidden,
                text: """
                    hrm serve: a WebSocket from a page of '\(shown)' is not allowed: only the page's \
                    own origin and those given with --allow-origin may read the feed
                    """,
                log: (
                    "origin",
                    "refused a WebSocket from origin '\(shown)' (403): hrm serve --allow-origin '\(shown)' lets it in"
                ))
        }
        if hub.isFull {
            var refusal = Self.full(hub.maximum)
            refusal.log = ("full", "refused a WebSocket client: \(hub.maximum) already (--max-clients), 503")
            return refusal
        }
        return nil
    }

    /// The cap reached: 503, for SSE and WebSocket alike.
    static func full(_ maximum: Int) -> Refusal {
        Refusal(
            status: .serviceUnavailable,
            text: "hrm serve: \(maximum) feed clients already (--max-clients); try again later",
            headers: [("Retry-After", "5")])
    }

    /// No `Origin` (a program, not a page), the page's own (`http://` + its Host), or one given
    /// with `--allow-origin`.
    func originAllowed(_ origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        let normalised = Self.normalised(origin)
        if let host, normalised == "http://" + host.lowercased() { return true }
        return allowedOrigins.contains(normalised)
    }

    /// Any Host when listening beyond loopback; on loopback, a loopback name or address (what
    /// a DNS rebinding attack cannot send), or the host of an `--allow-origin`.
    func hostAllowed(_ host: String) -> Bool {
        guard loopbackOnly else { return true }
        guard let name = Self.hostname(ofHost: host) else { return false }
        return Self.isLoopback(name) || allowedHosts.contains(name)
    }

    static func isWebSocketUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.headers[canonicalForm: "upgrade"].contains { $0.lowercased() == "websocket" }
    }

    /// `localhost`, `*.localhost` (RFC 6761: never resolved through DNS), 127.0.0.0/8, `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// `Host: example.com:8757` → `example.com`; `[::1]:8757` → `::1`.
    static func hostname(ofHost host: String) -> String? {
        let value = host.trimmingCharacters(in: .whitespaces).lowercased()
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        let name = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first
        return name.map(String.init).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `https://overlay.example:8443` → `overlay.example`.
    static func hostname(ofOrigin origin: String) -> String? {
        guard let scheme = origin.range(of: "://") else { return nil }
        return hostname(ofHost: String(origin[scheme.upperBound...]))
    }

    /// Lowercased, without a trailing slash.
    static func normalised(_ origin: String) -> String {
        var value = origin.trimmingCharacters(in: .whitespaces).lowercased()
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }
}

/// Stands between NIO's HTTP decoder and the WebSocket upgrade (and, for a connection that is not
/// upgraded, Hummingbird's routes): refuses with a clear status and text what `AccessPolicy`
/// refuses, a malformed or oversized request; then closes the connection. A connection that sends
/// no request head within `firstRequestTimeout` is closed.
///
/// Without it a refused upgrade is Hummingbird's bare `400` (hummingbird-websocket answers every
/// upgrade that `shouldUpgrade` declines with `400 Bad Request`, no body, and the router never sees
/// the request), and the routes cannot tell a foreign `Origin` (403) from a full house (503).
final class RequestGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// A connection that has not sent a whole request head by then is closed.
    static let firstRequestTimeout: TimeAmount = .seconds(10)
    /// After a refusal, how long the client may take to read it before the connection is closed.
    static let linger: TimeAmount = .seconds(2)

    private let policy: AccessPolicy
    private let hub: ClientHub
    private var timeout: Scheduled<Void>? = nil
    private var refusing = false
    private var seenRequest = false
    /// The path of the request under way: an SSE stream's client that closes its side is gone.
    private var path = ""

    init(policy: AccessPolicy, hub: ClientHub) {
        self.policy = policy
        self.hub = hub
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Closed without an answer: a browser opens connections ahead of need and may never use
        // them; a 408 on one would be taken as the answer to its next request.
        timeout = context.eventLoop.assumeIsolated().scheduleTask(in: Self.firstRequestTimeout) {
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeout?.cancel()
        timeout = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        seenRequest = true
        path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        timeout?.cancel()
        timeout = nil
        if let refusal = policy.check(head, hub: hub) {
            if let log = refusal.log { hub.refused(log.text, kind: log.kind) }
            refuse(context, refusal)
            return
        }
        context.fireChannelRead(data)
        // Upgraded, the connection carries WebSocket frames: this handler must not be there.
        if AccessPolicy.isWebSocketUpgrade(head) {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Once a request has gone through, Hummingbird answers what follows (400 and a close).
        guard !seenRequest, !refusing, let parse = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if case .headerOverflow = parse {
            refuse(
                context,
                AccessPolicy.Refusal(
                    status: .requestHeaderFieldsTooLarge,
                    text: "hrm serve: the request's headers are too large"))
        } else {
            refuse(context, AccessPolicy.Refusal(status: .badRequest, text: "hrm serve: a malformed request"))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client read the refusal and closed its side, or an SSE client went (an EventSource
        // never closes only its side): close ours, and the feed client goes now rather than at
        // its next write.
        if let event = event as? ChannelEvent, event == .inputClosed, refusing || path == "/events" {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Answers `refusal` with `Connection: close`, ends the output, and closes the connection once
    /// the client has closed its side or `linger` has passed (closing at once, with a request body
    /// still coming in, could reset the connection before the client reads the answer).
    private func refuse(_ context: ChannelHandlerContext, _ refusal: AccessPolicy.Refusal) {
        guard !refusing else { return }
        refusing = true
        timeout?.cancel()
        timeout = nil
        let body = refusal.text + "\n"
        var headers = HTTPHeaders([
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.utf8.count)),
            ("Connection", "close"), ("Cache-Control", "no-store"),
        ])
        for (name, value) in refusal.headers { headers.add(name: name, value: value) }
        context.write(
            wrapOutboundOut(
                .head(HTTPResponseHead(version: .http1_1, status: refusal.status, headers: headers))),
            promise: nil)
        context.write(
            wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        let loop = context.eventLoop.assumeIsolated()
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
        }
        loop.scheduleTask(in: Self.linger) { context.close(promise: nil) }
    }
}

/// hummingbird-websocket's HTTP/1 channel with WebSocket upgrade, and a `RequestGate` in front of
/// its upgrade handler.
struct FeedServerChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    let policy: AccessPolicy
    let hub: ClientHub

    /// The kernel's send buffer per connection (Linux doubles it): far more than a feed needs
    /// (about 50 kB/s at 200 notifications/s), and a client that stops reading backs up into its
    /// queue within seconds instead of into megabytes of kernel memory.
    static let sendBuffer: SocketOptionValue = 32 * 1024
    /// NIO's own outbound buffer: a write waits beyond this.
    static let waterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 8 * 1024, high: 32 * 1024)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { [policy, hub] value in
            if let options = channel.syncOptions {
                try options.setOption(.socketOption(.so_sndbuf), value: Self.sendBuffer)
                try options.setOption(.writeBufferWaterMark, value: Self.waterMark)
            }
            let operations = channel.pipeline.syncOperations
            let upgrader = try operations.handler(
                type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try operations.addHandler(RequestGate(policy: policy, hub: hub), position: .before(upgrader))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
