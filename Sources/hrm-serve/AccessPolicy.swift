import HRMCLI
import Monitor
import NIOCore
import NIOHTTP1

/// Who may ask what. Everything here is read-only, so the questions are only whether a page of
/// another site may read the feed (the WebSocket's `Origin`; the same-origin policy keeps it from
/// reading `/events` and `/api/current` without CORS), whether a request is really for this
/// server (`Host`, against DNS rebinding), whether a WebSocket handshake is one, and how big a
/// request may be.
struct AccessPolicy: Sendable {
    /// `--allow-origin`, lowercased.
    let allowedOrigins: Set<String>
    /// `--allow-host`, and the hosts of those origins (a reverse proxy's name is a Host to answer).
    let allowedHosts: Set<String>
    /// Listening on loopback: only requests for a loopback name (or an allowed host) are answered.
    let loopbackOnly: Bool
    /// Beyond loopback, the names and addresses this machine is reached by.
    let machine: MachineNames
    /// How long a connection may take to send a whole request head (`--head-timeout`).
    let headTimeout: TimeAmount
    /// The longest request target (path and query).
    static let maxTarget = 2048

    init(_ settings: ServeArguments, machine: MachineNames) {
        allowedOrigins = Set(settings.allowOrigin.map { Self.normalised($0) })
        allowedHosts = Set(
            allowedOrigins.compactMap { Self.hostname(ofOrigin: $0) }
                + settings.allowHost.compactMap { Self.hostname(ofHost: $0) })
        loopbackOnly = Self.isLoopback(settings.address.host)
        self.machine = machine
        headTimeout = .milliseconds(Int64((settings.headTimeoutSeconds * 1000).rounded()))
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

    /// nil when `head` may go on to the routes (or the WebSocket upgrade); `first`: the
    /// connection's first request (the only one that can be upgraded).
    func check(_ head: HTTPRequestHead, first: Bool, hub: ClientHub) -> Refusal? {
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
            $0.trimmingSpaces
        }
        if (length != nil && length != "0") || head.headers.contains(name: "transfer-encoding") {
            return Refusal(status: .payloadTooLarge, text: "hrm serve takes no request body")
        }
        let hosts = head.headers["host"]
        if hosts.count > 1 { return Refusal(status: .badRequest, text: "hrm serve: more than one Host") }
        let host = hosts.first
        if let host, !hostAllowed(host) {
            let shown = Self.shown(host, limit: 80)
            let answered =
                loopbackOnly
                ? "hrm serve listens on loopback and answers only requests for localhost, 127.0.0.1 or [::1]"
                : "hrm serve answers only requests for this machine's name, its addresses or localhost"
            return Refusal(
                status: .forbidden,
                text: """
                    \(answered), not for '\(shown)' (a guard against DNS rebinding). Open \
                    http://127.0.0.1:PORT/, or name the host with --allow-host.
                    """,
                log: (
                    "host",
                    "refused a request for Host '\(shown)' (403): not a name of this machine; hrm serve --allow-host lets it in"
                ))
        }
        guard head.headers.contains(name: "upgrade") else { return nil }
        if let fault = Self.handshakeFault(head, first: first) { return fault }
        let origin = head.headers.first(name: "origin")
        guard originAllowed(origin, host: host) else {
            let shown = Self.shown(origin ?? "", limit: 80)
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

    /// What makes a request with `Upgrade` other than a WebSocket handshake that NIO's upgrader
    /// will take whole (RFC 6455 4.2.1), or nil. Anything less must be refused here: NIO answers a
    /// handshake without a key or with another version with nothing at all, and one without
    /// `Connection: Upgrade` is upgraded while the HTTP decoder reads on, so that a request sent
    /// behind it reaches the WebSocket decoder as HTTP and traps.
    static func handshakeFault(_ head: HTTPRequestHead, first: Bool) -> Refusal? {
        func bad(_ text: String, _ headers: [(String, String)] = []) -> Refusal {
            Refusal(status: .badRequest, text: "hrm serve: \(text)", headers: headers)
        }
        let protocols = head.headers[canonicalForm: "upgrade"].map { $0.lowercased() }
        guard protocols == ["websocket"] else {
            let shown = Self.shown(head.headers["upgrade"].joined(separator: ", "), limit: 60)
            return bad("no upgrade to '\(shown)' here: only a WebSocket at /ws (Upgrade: websocket)")
        }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        guard path == "/ws" else {
            return Refusal(status: .notFound, text: "hrm serve: no WebSocket here; the feed is /ws")
        }
        guard head.version == .http1_1 else { return bad("a WebSocket handshake is HTTP/1.1") }
        guard head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" })
        else {
            return bad("a WebSocket handshake needs Connection: Upgrade")
        }
        let versions = head.headers[canonicalForm: "sec-websocket-version"]
        guard versions == ["13"] else {
            return bad(
                "a WebSocket handshake needs Sec-WebSocket-Version: 13", [("Sec-WebSocket-Version", "13")])
        }
        let keys = head.headers["sec-websocket-key"]
        guard keys.count == 1, let key = keys.first, isWebSocketKey(key) else {
            return bad("a WebSocket handshake needs one Sec-WebSocket-Key (16 bytes in base64)")
        }
        guard first else { return bad("a WebSocket handshake must be a connection's first request") }
        return nil
    }

    /// 16 bytes in base64: 22 characters of its alphabet and `==`.
    static func isWebSocketKey(_ key: String) -> Bool {
        let value = key.trimmingSpaces
        guard value.utf8.count == 24, value.hasSuffix("==") else { return false }
        return value.utf8.prefix(22).allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "/")
        }
    }

    /// A value from the request, for a refusal's text: at most `limit` characters, control
    /// characters as `?` (the text goes back to the client and, escaped again, to stderr).
    static func shown(_ text: String, limit: Int) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
        return cleaned.count > limit ? String(cleaned.prefix(limit)) + "…" : cleaned
    }

    /// The cap reached: 503, for SSE and WebSocket alike.
    static func full(_ maximum: Int) -> Refusal {
        Refusal(
            status: .serviceUnavailable,
            text: "hrm serve: \(maximum) feed clients already (--max-clients); try again later",
            headers: [("Retry-After", "5")])
    }

    /// No `Origin` (a program, not a page), the page's own (`http://` + its Host, a Host that
    /// `hostAllowed` let in), or one given with `--allow-origin`.
    func originAllowed(_ origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        let normalised = Self.normalised(origin)
        if let host, normalised == "http://" + host.lowercased() { return true }
        return allowedOrigins.contains(normalised)
    }

    /// A name this server is reached by, which a DNS rebinding attack cannot send: a loopback
    /// name or address, an `--allow-host` (or `--allow-origin`'s host); beyond loopback also the
    /// machine's host name and its interfaces' addresses.
    func hostAllowed(_ host: String) -> Bool {
        guard let name = Self.hostname(ofHost: host) else { return false }
        if Self.isLoopback(name) || allowedHosts.contains(name) { return true }
        return !loopbackOnly && machine.contains(name)
    }

    /// `localhost`, `*.localhost` (RFC 6761: never resolved through DNS), 127.0.0.0/8, `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// `Host: example.com:8757` → `example.com` (a fully qualified `example.com.` too);
    /// `[::1]:8757` → `::1`.
    static func hostname(ofHost host: String) -> String? {
        let value = host.trimmingSpaces.lowercased()
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        guard var name = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first
        else { return nil }
        while name.hasSuffix(".") { name = name.dropLast() }
        return name.isEmpty ? nil : String(name)
    }

    /// `https://overlay.example:8443` → `overlay.example`.
    static func hostname(ofOrigin origin: String) -> String? {
        guard let scheme = origin.firstRange(of: "://") else { return nil }
        return hostname(ofHost: String(origin[scheme.upperBound...]))
    }

    /// Lowercased, without a trailing slash.
    static func normalised(_ origin: String) -> String {
        var value = origin.trimmingSpaces.lowercased()
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }
}
