public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `hrm serve`: a live page and feed for stream overlays and other programs. The web server lives
/// in `hrm-serve`, installed beside `hrm`, which this command runs in its place (as git runs
/// git-foo): the server's libraries stay out of `hrm watch`.
public struct ServeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Watch heart-rate monitors and serve a live page and feed.",
        discussion: """
            Finds and watches the strap(s) exactly as hrm watch does (every watch option works \
            here, --record too) and serves, on --listen (default 127.0.0.1:8757): GET / a live page for OBS \
            browser sources (URL parameters ?size=, ?color=, ?font=, ?show=bpm,zone,rr,hrv,graph, \
            ?bg=, ?offline=; see the README), GET /events Server-Sent Events and GET /ws a \
            WebSocket with the objects hrm watch --json prints (the current state first), GET \
            /api/current a JSON snapshot of every strap, GET /trends hrm trends' figures from the \
            session library as SVG charts (?days=, ?by=day|week, ?device=).

            Read-only; loopback only unless --listen says otherwise; a WebSocket from a page of \
            another origin is refused (403) unless --allow-origin names it; a request for a host name \
            this machine is not known by is refused (403, DNS rebinding) unless --allow-host names it; at most \
            --max-clients feed clients (503 past that); a client that cannot keep up is dropped \
            and may reconnect.

            Exit status: as hrm watch; 69 when the address is in use (before the strap is \
            touched) or hrm-serve is missing.
            """
    )

    @OptionGroup public var arguments: WatchArguments

    @OptionGroup(title: "Serving") public var serve: ServeArguments

    public init() {}

    public func run() async throws {
        StandardOutput.prepare()
        guard let server = Self.serverExecutable() else {
            StandardOutput.diagnostic(
                "hrm serve: hrm-serve is not installed beside hrm nor on PATH (make install installs both)")
            throw ExitCode(69)
        }
        // Everything after `serve`, as given: hrm-serve parses the same options.
        let all = CommandLine.arguments
        let rest = all.firstIndex(of: "serve").map { Array(all[($0 + 1)...]) } ?? Array(all.dropFirst())
        var argv: [UnsafeMutablePointer<CChar>?] = ([server] + rest).map { strdup($0) } + [nil]
        execv(server, &argv)
        let reason = String(cString: strerror(errno))
        StandardOutput.diagnostic("hrm serve: cannot run \(server): \(reason)")
        throw ExitCode(69)
    }

    /// `hrm-serve` beside the running `hrm` (its real path, so a symlink on PATH works), else on
    /// PATH.
    static func serverExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            let path = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let slash = path.lastIndex(of: "/") {
                let candidate = String(path[..<slash]) + "/hrm-serve"
                if access(candidate, X_OK) == 0 { return candidate }
            }
        }
        guard let pathVariable = getenv("PATH") else { return nil }
        for directory in String(cString: pathVariable).split(separator: ":") {
            let candidate = "\(directory)/hrm-serve"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
