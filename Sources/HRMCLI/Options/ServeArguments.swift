public import ArgumentParser
import MQTT
public import Monitor
import Outputs
import SessionLibrary

/// `hrm serve`'s own options: where it listens and whom it lets in.
public struct ServeArguments: ParsableArguments, Sendable {
    @Option(
        help: ArgumentHelp(
            "Listen here: HOST:PORT, [IPv6]:PORT or :PORT (every interface); port 0: any free one (logged). Default: loopback only. (default: 127.0.0.1:8757)",
            valueName: "host:port"))
    public var listen: String?

    @Option(
        help: ArgumentHelp(
            "Let pages of this origin (https://overlay.example, or null for a page opened from a file) read the feed: the WebSocket, and /events and /api/current through CORS; repeatable.",
            valueName: "origin"))
    public var allowOrigin: [String] = []

    /// `--allow-host`: more names a `Host` may be (beyond loopback and the machine's own).
    @Option(
        help: ArgumentHelp(
            "Answer requests for this host name too (a name this machine is reached by that hrm serve cannot know: a DNS alias, a router's address); repeatable. Requests for other names get 403 (DNS rebinding).",
            valueName: "name"))
    public var allowHost: [String] = []

    /// `--head-timeout`: how long a connection may take to send each whole request head.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Close a connection that takes longer than this to send a whole request head: seconds, or with a unit (default: 10).",
            valueName: "time"),
        transform: Seconds.parsing)
    public var headTimeout: Seconds?

    /// `--head-timeout` in seconds: 10 unless given.
    public var headTimeoutSeconds: Double { headTimeout?.value ?? 10 }

    @Option(help: ArgumentHelp("Serve at most this many feed clients at once.", valueName: "n"))
    public var maxClients = 64

    @Option(
        help: ArgumentHelp(
            "What the page shows after 3 s without a measurement (its ?offline= parameter overrides it).",
            valueName: "text"))
    public var offlineText = "disconnected"

    /// `-v`/`--verbose` (also: clients coming and going), as every command that touches the bus has it.
    @OptionGroup(title: "Logging") public var log: LogOptions

    public var verbose: Bool { log.verbose > 0 }

    @Option(
        help: ArgumentHelp(
            "Serve every strap that hrm hosts publish to this MQTT broker (hrm watch --mqtt) instead of watching one here: a team page.",
            valueName: "url"))
    public var mqttTeam: String?

    @Option(
        help: ArgumentHelp(
            "Record the session to this new file, as hrm watch --record does (JSON lines with the raw notifications; see hrm record).",
            valueName: "path"))
    public var record: String?

    public init() {}

    public func validate() throws {
        if let listen, ListenAddress(listen) == nil {
            throw ValidationError(
                "--listen '\(TerminalText.sanitised(listen, limit: 60))': give HOST:PORT, [IPv6]:PORT or :PORT with a port from 0 (any free one) to 65535"
            )
        }
        if maxClients < 1 { throw ValidationError("--max-clients must be at least 1") }
        if let mqttTeam {
            do throws(MQTTError) {
                _ = try MQTTBrokerURL(parsing: mqttTeam)
            } catch {
                throw ValidationError("--mqtt-team: \(error.message)")
            }
        }
        if mqttTeam != nil, record != nil {
            // It would be ignored: the team's straps are watched, and recorded, by their hosts.
            throw ValidationError(
                "--record records a strap watched here; with --mqtt-team none is (record on the hosts)")
        }
        for origin in allowOrigin
        where !(origin.hasPrefix("http://") || origin.hasPrefix("https://") || origin == "null") {
            throw ValidationError(
                "--allow-origin '\(TerminalText.sanitised(origin, limit: 60))': an origin is scheme://host[:port], like https://overlay.example (or null)"
            )
        }
        for host in allowHost where !ListenAddress.isHostName(host) {
            throw ValidationError(
                "--allow-host '\(TerminalText.sanitised(host, limit: 60))': give a host name or an address, like studio.lan, 192.168.1.20 or ::1"
            )
        }
        if let headTimeout, headTimeout.value > 3600 {
            throw ValidationError("--head-timeout: at most an hour (3600 s)")
        }
        if offlineText.count > 200 { throw ValidationError("--offline-text is longer than 200 characters") }
    }

    /// The address to bind: `--listen`, else loopback port 8757.
    public var address: ListenAddress {
        listen.flatMap(ListenAddress.init) ?? ListenAddress(host: "127.0.0.1", port: 8757)
    }
}

/// `--listen`: a host (a name, an IPv4 address, an IPv6 one without brackets) and a port.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, `[IPv6]:PORT`, `:PORT` (every interface, `0.0.0.0`); port 0: any free one.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            guard host.contains(":") else { return nil }
        } else if host.contains(":") {
            return nil  // IPv6 needs brackets: [::1]:8757
        }
        if host.isEmpty { host = "0.0.0.0" }
        guard Self.isHostName(host) else { return nil }
        self.host = host
        self.port = port
    }

    /// A host name or an address without brackets: letters, digits, `.`, `-`, `:`.
    public static func isHostName(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) }
    }

    /// `http://127.0.0.1:8757/`, for the log line people click; `http://0.0.0.0:8757/` for every
    /// interface (see `isEveryInterface`).
    public var url: String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/"
    }

    /// `0.0.0.0` or `::`: every interface, so anyone who can reach the machine.
    public var isEveryInterface: Bool { host == "0.0.0.0" || host == "::" || host == "0:0:0:0:0:0:0:0" }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
