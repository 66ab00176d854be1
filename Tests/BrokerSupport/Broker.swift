public import Foundation
public import MQTT
import Spawn
import Synchronization

/// The mosquitto programs the tests run: a real broker, and its own clients as independent
/// witnesses of what went over the wire.
public enum Tools {
    public static let broker = find(
        "mosquitto", in: ["/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"])
    public static let sub = find("mosquitto_sub", in: ["/usr/bin", "/usr/local/bin"])
    public static let pub = find("mosquitto_pub", in: ["/usr/bin", "/usr/local/bin"])
    public static let passwd = find("mosquitto_passwd", in: ["/usr/bin", "/usr/local/bin"])
    public static let openssl = find("openssl", in: ["/usr/bin", "/usr/local/bin"])

    private static func find(_ name: String, in directories: [String]) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let all = directories + path.split(separator: ":").map(String.init)
        return all.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// What of `needed` is missing, in words (`mosquitto_sub not installed (…)`); nil when all
    /// are there. `.ci/run` installs them all, so a test that finds one missing fails (with
    /// `requireTools` in the test targets) rather than passing for one that checked MQTT.
    public static func missing(_ needed: [String?], names: [String]) -> String? {
        let missing = zip(needed, names).filter { $0.0 == nil }.map(\.1)
        guard !missing.isEmpty else { return nil }
        return
            "\(missing.joined(separator: ", ")) not installed (apt-get install mosquitto mosquitto-clients openssl; .ci/run does)"
    }

    /// What is missing of the broker and its clients; nil when they are all there.
    public static var brokerMissing: String? {
        missing([broker, sub, pub], names: ["mosquitto", "mosquitto_sub", "mosquitto_pub"])
    }

    /// What is missing of the broker, its clients and openssl; nil when they are all there.
    public static var tlsMissing: String? {
        missing(
            [broker, sub, pub, openssl], names: ["mosquitto", "mosquitto_sub", "mosquitto_pub", "openssl"])
    }
}

/// How long a test waits for what should take milliseconds. Generous on purpose: these tests run
/// with the whole suite, some thirty brokers, buses, simulators and Python processes on two cores,
/// where a task has been seen to resume 13 s late, and a whole test process to get no CPU for
/// 60 s (two suites and a release build beside it, load 27); a wait that ends early costs
/// nothing, and only a hang waits this long.
public enum Patience {
    public static let long: Duration = .seconds(90)
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A temporary directory, removed by `remove()`.
public func makeTemporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("hrm-mqtt-test-\(getpid())-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// A port nothing listens on right now: bound to 127.0.0.1:0 to let the kernel choose, then closed.
public func freePort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
    defer { close(fd) }
    var address = loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else { throw TestFailure("bind: \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}

public func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// Whether something accepts TCP connections at 127.0.0.1:port.
public func isListening(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// A listening socket that never accepts nor answers: TCP connects (the kernel completes the
/// handshake into the backlog), then nothing, ever.
public final class BlackHole {
    public let port: UInt16
    private let fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw TestFailure("bind/listen: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// A client's connection waits in the backlog (the listening socket is readable): its connect
    /// is done, and it now waits for an answer that never comes. Does not block.
    public var hasPendingConnection: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    deinit { close(fd) }
}

/// A child process with stdout and stderr in a file. Spawn's ChildProcess rather than Foundation's
/// Process: Process passes on the spawning thread's signal mask, and the cooperative pool's threads
/// block SIGTERM, so a broker started from a test could not be stopped cleanly (nor save its
/// persistence file). Waiting polls waitpid without holding a thread.
public final class Child: Sendable {
    public let output: URL
    private let process: ChildProcess

    public init(_ executable: String, _ arguments: [String], output: URL) throws {
        let fd = open(output.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot create \(output.path): \(errno)") }
        defer { close(fd) }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        process = try ChildProcess(
            executable: executable, arguments: arguments, stdoutFD: fd, stderrFD: fd,
            stdinFD: null >= 0 ? null : nil)
        self.output = output
    }

    public var text: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
    public var lines: [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
    public var isRunning: Bool { process.poll() == nil }
    /// The exit status (128 + signal if a signal ended it); -1 while running.
    public var status: Int32 { process.poll() ?? -1 }

    /// Waits at most `timeout` for the exit; true if it exited.
    public func waitForExit(timeout: Duration) async -> Bool {
        await process.wait(timeout: timeout) != nil
    }

    public func send(_ signal: Int32) { process.send(signal) }

    /// SIGTERM (and SIGCONT, in case it was stopped), then SIGKILL after 5 s.
    public func stop() async {
        guard isRunning else { return }
        process.send(SIGTERM)
        process.send(SIGCONT)
        if await waitForExit(timeout: .seconds(5)) { return }
        process.send(SIGKILL)
        _ = await waitForExit(timeout: .seconds(5))
    }
}

/// Runs a program to its end (at most `timeout`, then it is killed); returns its status and output.
public func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30)) async throws
    -> (
        Int32, String
    )
{
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let child = try Child(executable, arguments, output: directory.appendingPathComponent("output"))
    if !(await child.waitForExit(timeout: timeout)) {
        await child.stop()
        throw TestFailure(
            "\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
    }
    return (child.status, child.text)
}

/// Runs `body` with a broker of its own, removed afterwards whatever happens.
public func withBroker(
    persistence: Bool = false, users: [String: String] = [:], tls: Broker.TLSFiles? = nil,
    _ body: (Broker) async throws -> Void
) async throws {
    let broker = try await Broker.start(persistence: persistence, users: users, tls: tls)
    do {
        try await body(broker)
    } catch {
        await broker.remove()
        throw error
    }
    await broker.remove()
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes.
public func eventually(within timeout: Duration = Patience.long, _ condition: () -> Bool) async -> Bool {
    await eventually(within: timeout) { () async -> Bool in condition() }
}

/// As `eventually`, for a condition that asks an actor (a log kept by one).
public func eventually(within timeout: Duration = Patience.long, _ condition: () async -> Bool) async -> Bool
{
    let clock = ContinuousClock()
    let end = clock.now + timeout
    while clock.now < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}

/// A mosquitto broker of the test's own: its config in a temporary directory, listening on
/// 127.0.0.1 at a free port (never a fixed one).
public final class Broker: Sendable {
    public struct TLSFiles: Sendable {
        public var ca: URL
        public var certificate: URL
        public var key: URL

        public init(ca: URL, certificate: URL, key: URL) {
            self.ca = ca
            self.certificate = certificate
            self.key = key
        }
    }

    public let directory: URL
    public let port: UInt16
    /// With TLS: the mqtts listener (`port` stays plain, for mosquitto_sub).
    public let tlsPort: UInt16?
    private let config: URL
    private let child = Mutex<Child?>(nil)
    private let starts = Mutex(0)
    private let subscribers = Mutex<[Subscriber]>([])

    /// mqtt://[user:password@]127.0.0.1:port
    public func url(user: String? = nil, password: String? = nil) throws -> MQTTBrokerURL {
        let credentials = user.map { user in password.map { "\(user):\($0)@" } ?? "\(user)@" } ?? ""
        return try MQTTBrokerURL(parsing: "mqtt://\(credentials)127.0.0.1:\(port)")
    }

    private init(directory: URL, port: UInt16, tlsPort: UInt16?, config: URL) {
        self.directory = directory
        self.port = port
        self.tlsPort = tlsPort
        self.config = config
    }

    /// `persistence`: the broker keeps sessions and queued messages across a restart.
    /// `users`: name → password; anonymous clients are then refused.
    public static func start(persistence: Bool = false, users: [String: String] = [:], tls: TLSFiles? = nil)
        async throws -> Broker
    {
        let directory = try makeTemporaryDirectory()
        var common = [
            "user \(String(cString: getpwuid(getuid()).pointee.pw_name))",
            "max_queued_messages 100000",
            "max_inflight_messages 100",
        ]
        if users.isEmpty {
            common.append("allow_anonymous true")
        } else {
            let passwords = directory.appendingPathComponent("passwords")
            for (index, (user, password)) in users.sorted(by: { $0.key < $1.key }).enumerated() {
                let arguments = (index == 0 ? ["-c"] : []) + ["-b", passwords.path, user, password]
                let (status, output) = try await run(Tools.passwd ?? "mosquitto_passwd", arguments)
                guard status == 0 else { throw TestFailure("mosquitto_passwd: \(output)") }
            }
            common += ["allow_anonymous false", "password_file \(passwords.path)"]
        }
        if persistence {
            common += ["persistence true", "persistence_location \(directory.path)/", "autosave_interval 0"]
        } else {
            common.append("persistence false")
        }
        var lastError: any Error = TestFailure("no attempt")
        // A free port can be taken between freePort() and the broker's bind: try a few.
        for _ in 0..<5 {
            let port = try freePort()
            let tlsPort = tls == nil ? nil : try freePort()
            var lines = ["listener \(port) 127.0.0.1"] + common
            if let tls, let tlsPort {
                lines += [
                    "listener \(tlsPort) 127.0.0.1", "cafile \(tls.ca.path)",
                    "certfile \(tls.certificate.path)",
                    "keyfile \(tls.key.path)",
                ]
            }
            let config = directory.appendingPathComponent("mosquitto.conf")
            try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
            let broker = Broker(directory: directory, port: port, tlsPort: tlsPort, config: config)
            do {
                try await broker.start()
                return broker
            } catch {
                lastError = error
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError
    }

    /// Starts (or starts again, on the same port) and waits until it accepts connections.
    public func start() async throws {
        let count = starts.withLock { count in
            count += 1
            return count
        }
        let log = directory.appendingPathComponent("broker-\(count).log")
        let child = try Child(Tools.broker ?? "mosquitto", ["-c", config.path], output: log)
        self.child.withLock { $0 = child }
        let ready = await eventually { !child.isRunning || isListening(port) }
        guard ready, child.isRunning, tlsPort.map(isListening) ?? true else {
            await child.stop()
            throw TestFailure("mosquitto did not start on port \(port): \(child.text)")
        }
    }

    /// SIGSTOP: the broker hangs, reading nothing and acknowledging nothing, its sockets open.
    public func freeze() {
        child.withLock { $0?.send(SIGSTOP) }
    }

    /// SIGTERM (mosquitto saves its persistence file on the way out) and wait for the exit.
    public func stop() async {
        let child = self.child.withLock { child in
            defer { child = nil }
            return child
        }
        await child?.stop()
    }

    /// mosquitto_sub against this broker, stopped by `remove()`.
    public func subscriber(topics: [String], format: String = "%t %r %q %x", extra: [String] = []) throws
        -> Subscriber
    {
        let subscriber = try Subscriber(
            port: port, topics: topics, format: format, extra: extra, directory: directory)
        subscribers.withLock { $0.append(subscriber) }
        return subscriber
    }

    /// mosquitto_pub against this broker, QoS 1.
    public func publish(_ topic: String, _ text: String, retain: Bool = false) async throws {
        let arguments =
            ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-m", text] + (retain ? ["-r"] : [])
        let (status, output) = try await run(Tools.pub ?? "mosquitto_pub", arguments)
        guard status == 0 else { throw TestFailure("mosquitto_pub: \(output)") }
    }

    /// mosquitto_sub for at most `count` messages (retained ones come at once) or `timeout`.
    public func retained(_ topic: String, count: Int = 1, timeout: Int = 20) async throws -> [String] {
        let arguments = [
            "-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-C", "\(count)", "-W", "\(timeout)",
            "-F", "%t %r %p",
        ]
        let (_, output) = try await run(
            Tools.sub ?? "mosquitto_sub", arguments, timeout: .seconds(timeout + 5))
        return output.split(separator: "\n").map(String.init)
    }

    /// Stops the broker and the subscribers, and removes the files.
    public func remove() async {
        for subscriber in subscribers.withLock({ $0 }) { await subscriber.stop() }
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// mosquitto_sub running for the whole test: what an independent client saw, line by line.
public final class Subscriber: Sendable {
    private let child: Child

    /// `-F` format `format` (default: topic, retain flag, QoS, payload in hex), QoS 1.
    public init(
        port: UInt16, topics: [String], format: String = "%t %r %q %x", extra: [String] = [], directory: URL
    ) throws {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-F", format] + extra
        for topic in topics { arguments += ["-t", topic] }
        child = try Child(
            Tools.sub ?? "mosquitto_sub", arguments,
            output: directory.appendingPathComponent("sub-\(UUID().uuidString.prefix(8)).txt"))
    }

    public var lines: [String] { child.lines }

    /// Publishes `probe` with `client` every 100 ms until this subscriber prints it: it is then
    /// subscribed.
    public func waitUntilSubscribed(_ client: MQTTClient, probe: MQTTMessage) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + Patience.long
        while clock.now < end {
            client.publish(probe)
            let seen = await eventually(within: .milliseconds(100)) {
                child.lines.contains { $0.hasPrefix(probe.topic + " ") }
            }
            if seen { return true }
        }
        return false
    }

    public func wait(within timeout: Duration = Patience.long, until condition: ([String]) -> Bool) async
        -> Bool
    {
        await eventually(within: timeout) { condition(child.lines) }
    }

    public func stop() async { await child.stop() }
}

/// Collects a client's events (its one consumer) for the test to look at.
public final class EventLog: Sendable {
    private let events = Mutex<[MQTTEvent]>([])
    private let finished = Mutex(false)

    public init(_ client: MQTTClient) {
        let stream = client.events
        Task { [self] in
            for await event in stream { events.withLock { $0.append(event) } }
            finished.withLock { $0 = true }
        }
    }

    public var all: [MQTTEvent] { events.withLock { $0 } }
    public var isFinished: Bool { finished.withLock { $0 } }

    public func count(of wanted: MQTTEvent) -> Int { all.filter { $0 == wanted }.count }

    public var disconnections: Int {
        all.filter {
            if case .disconnected = $0 { return true }
            return false
        }.count
    }

    public var dropped: Int {
        all.reduce(0) {
            if case .dropped(let count) = $1 { return $0 + count }
            return $0
        }
    }

    public var messages: [MQTTMessage] {
        all.compactMap {
            if case .message(let message) = $0 { return message }
            return nil
        }
    }

    public func wait(within timeout: Duration = Patience.long, until condition: (EventLog) -> Bool) async
        -> Bool
    {
        await eventually(within: timeout) { condition(self) }
    }
}

public func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

public func hex(_ text: String) -> String { hex(Array(text.utf8)) }

/// Options with short delays, so that the tests stay short.
public func quickOptions(_ clientID: String = "hrm-test-\(UUID().uuidString.prefix(8))") -> MQTTOptions {
    var options = MQTTOptions(clientID: clientID)
    // Longer than any wait a test makes: an error that is not .timeout came from the broker or
    // the network, not from the clock.
    options.connectTimeout = .seconds(60)
    options.reconnectDelay = .milliseconds(50) ... .milliseconds(200)
    return options
}
