import HRMCLI
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The routes: the page, the feed (SSE and WebSocket), the snapshot. Read-only; nothing here
/// changes anything.
struct Server {
    let hub: ClientHub
    let settings: ServeArguments

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let page = Page.html.replacingOccurrences(
            of: "__OFFLINE_TEXT__", with: Self.escaped(settings.offlineText))
        router.get("/") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
        }
        router.get("/api/current") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: hub.feed.current() + "\n")))
        }
        router.get("/events") { _, _ in
            guard let (client, current) = hub.join("SSE") else { return Self.full(hub.maximum) }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    defer { hub.leave(client, "SSE") }
                    for line in current { try await writer.write(ByteBuffer(string: "data: \(line)\n\n")) }
                    for await line in client.lines {
                        try await writer.write(ByteBuffer(string: "data: \(line)\n\n"))
                    }
                    try await writer.finish(nil)
                })
        }
        // Reached only when the upgrade was refused.
        router.get("/ws") { request, _ in
            Response(
                status: .forbidden, headers: [.contentType: "text/plain"],
                body: ResponseBody(
                    byteBuffer: ByteBuffer(
                        string: "a WebSocket from this origin is not allowed (hrm serve --allow-origin)\n")))
        }
        return router
    }

    /// The WebSocket upgrade: only for `/ws`, only from the page's own origin (or an allowed one).
    func upgrade(_ request: HTTPRequest) -> ShouldUpgradeResult<
        WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
    > {
        guard request.path == "/ws", originAllowed(request) else { return .dontUpgrade }
        guard let (client, current) = hub.join("WebSocket") else { return .dontUpgrade }
        return .upgrade([:]) { _, outbound, _ in
            defer { hub.leave(client, "WebSocket") }
            for line in current { try await outbound.write(.text(line)) }
            for await line in client.lines { try await outbound.write(.text(line)) }
        }
    }

    /// No `Origin` (a program, not a page), the page's own (`http://` + Host), or one given with
    /// `--allow-origin`.
    func originAllowed(_ request: HTTPRequest) -> Bool {
        guard let origin = request.headerFields[.origin] else { return true }
        if let host = request.authority, origin == "http://\(host)" { return true }
        return settings.allowOrigin.contains(origin)
    }

    static func full(_ maximum: Int) -> Response {
        Response(
            status: .serviceUnavailable, headers: [.contentType: "text/plain", .retryAfter: "5"],
            body: ResponseBody(
                byteBuffer: ByteBuffer(string: "hrm serve: \(maximum) clients already (--max-clients)\n")))
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
