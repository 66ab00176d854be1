public import ArgumentParser
import MQTT

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
        for origin in allowOrigin
        where !(origin.hasPrefix("http://") || origin.hasPrefix("https://") || origin == "null") {
            throw ValidationError(
                "--allow-origin '\(TerminalText.sanitised(origin, limit: 60))': an origin is scheme://host[:port], like https://overlay.example (or null)"
            )
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
        guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) }) else {
            return nil
        }
        self.host = host
        self.port = port
    }

    /// `http://127.0.0.1:8757/`, for the log line people click.
    public var url: String {
        let shown = host == "0.0.0.0" ? "localhost" : host.contains(":") ? "[\(host)]" : host
        return "http://\(shown):\(port)/"
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
