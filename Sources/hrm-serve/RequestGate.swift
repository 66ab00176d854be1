import HRMCLI
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Stands between NIO's HTTP decoder and the WebSocket upgrade (and, for a connection that is not
/// upgraded, Hummingbird's routes): refuses with a clear status and text what `AccessPolicy`
/// refuses, a malformed or oversized request; then closes the connection. Pipelined requests are
/// answered in order: a refusal waits until the answers to the requests before it are written.
/// A connection that takes longer than the policy's `headTimeout` to send a whole request head
/// (its first, or its next after an answer) is closed; so is the one that has waited longest
/// when too many wait (`HeadWaiters`).
///
/// Without it a refused upgrade is Hummingbird's bare `400` (hummingbird-websocket answers every
/// upgrade that `shouldUpgrade` declines with `400 Bad Request`, no body, and the router never sees
/// the request), and the routes cannot tell a foreign `Origin` (403) from a full house (503).
final class RequestGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// After a refusal, how long the client may take to read it before the connection is closed.
    static let linger: TimeAmount = .seconds(2)

    private let policy: AccessPolicy
    private let hub: ClientHub
    private let waiters: HeadWaiters
    /// While a request head is awaited: its deadline, and the connection's place among the waiting.
    private var deadline: Scheduled<Void>? = nil
    private var ticket: HeadWaiters.Ticket? = nil
    /// Requests passed on to the routes, and how many of them are not answered to the end yet.
    private var passed = 0
    private var unanswered = 0
    /// Set at a refusal: nothing more is read.
    private var refusing = false
    /// A refusal waiting for the answers before it.
    private var pending: AccessPolicy.Refusal? = nil
    /// The client closed its side.
    private var inputClosed = false
    /// The path of the request under way: an SSE stream's client that closes its side is gone.
    private var path = ""
    /// A WebSocket handshake went through: what passes from now on may be WebSocket frames, not
    /// HTTP parts (unwrapping one as HTTP would trap), until this handler is gone.
    private var upgrading = false

    init(policy: AccessPolicy, hub: ClientHub, waiters: HeadWaiters) {
        self.policy = policy
        self.hub = hub
        self.waiters = waiters
    }

    func handlerAdded(context: ChannelHandlerContext) {
        awaitHead(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        headCame()
    }

    /// The deadline for the next head. Closed without an answer when it passes: a browser opens
    /// connections ahead of need and keeps them between requests; a 408 on one would be taken as
    /// the answer to its next request.
    private func awaitHead(_ context: ChannelHandlerContext) {
        headCame()
        let timeout = policy.headTimeout
        let (hub, peer) = (hub, Self.peer(context.channel))
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            hub.refused(
                "closed the connection of \(peer): no whole request head within \(Self.seconds(timeout)) s (--head-timeout)",
                kind: "head")
            context.close(promise: nil)
        }
        ticket = waiters.enter(context.channel)
    }

    private func headCame() {
        deadline?.cancel()
        deadline = nil
        if let ticket { waiters.leave(ticket) }
        ticket = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !upgrading else { return context.fireChannelRead(data) }
        guard !refusing else { return }
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        headCame()
        path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        if let refusal = policy.check(head, first: passed == 0, hub: hub) {
            if let log = refusal.log { hub.refused(log.text, kind: log.kind) }
            refuse(context, refusal)
            return
        }
        passed += 1
        unanswered += 1
        // Upgraded, the connection carries WebSocket frames: this handler must not be there. (Only
        // a first request is upgraded; `check` refused a later one.)
        upgrading = head.headers.contains(name: "upgrade")
        context.fireChannelRead(data)
        if upgrading { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !upgrading else { return context.write(data, promise: promise) }
        let part = unwrapOutboundIn(data)
        context.write(data, promise: promise)
        guard case .end = part, unanswered > 0 else { return }
        unanswered -= 1
        guard unanswered == 0 else { return }
        if let refusal = pending {
            pending = nil
            send(context, refusal)
        } else if !refusing {
            awaitHead(context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !refusing, let parse = error as? HTTPParserError else {
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
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        inputClosed = true
        // A refusal still to be written (after the answers before it) closes the connection then.
        if pending != nil { return }
        // The client read the refusal and closed its side, or an SSE client went (an EventSource
        // never closes only its side): close ours, and the feed client goes now rather than at
        // its next write.
        if refusing || path == "/events" {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Refuses: nothing more is read; the refusal is written now, or once the requests before it
    /// are answered.
    private func refuse(_ context: ChannelHandlerContext, _ refusal: AccessPolicy.Refusal) {
        guard !refusing else { return }
        refusing = true
        headCame()
        if unanswered > 0 {
            pending = refusal
        } else {
            send(context, refusal)
        }
    }

    /// Answers `refusal` with `Connection: close`, ends the output, and closes the connection once
    /// the client has closed its side or `linger` has passed (closing at once, with a request body
    /// still coming in, could reset the connection before the client reads the answer).
    private func send(_ context: ChannelHandlerContext, _ refusal: AccessPolicy.Refusal) {
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
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { [inputClosed] _ in
            context.close(mode: inputClosed ? .all : .output, promise: nil)
        }
        loop.scheduleTask(in: Self.linger) { context.close(promise: nil) }
    }

    static func peer(_ channel: any Channel) -> String {
        channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
    }

    /// `10`, `0.5`: a time amount in seconds, for people.
    static func seconds(_ amount: TimeAmount) -> String {
        let value = Double(amount.nanoseconds) / 1e9
        return value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// hummingbird-websocket's HTTP/1 channel with WebSocket upgrade, and a `RequestGate` in front of
/// its upgrade handler.
struct FeedServerChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    let policy: AccessPolicy
    let hub: ClientHub
    let waiters: HeadWaiters

    /// The kernel's send buffer per connection (Linux doubles it): far more than a feed needs
    /// (about 50 kB/s at 200 notifications/s), and a client that stops reading backs up into its
    /// queue within seconds instead of into megabytes of kernel memory.
    static let sendBuffer: SocketOptionValue = 32 * 1024
    /// NIO's own outbound buffer: a write waits beyond this.
    static let waterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 8 * 1024, high: 32 * 1024)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { [policy, hub, waiters] value in
            if let options = channel.syncOptions {
                try options.setOption(.socketOption(.so_sndbuf), value: Self.sendBuffer)
                try options.setOption(.writeBufferWaterMark, value: Self.waterMark)
            }
            let operations = channel.pipeline.syncOperations
            let upgrader = try operations.handler(
                type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try operations.addHandler(
                RequestGate(policy: policy, hub: hub, waiters: waiters), position: .before(upgrader))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
