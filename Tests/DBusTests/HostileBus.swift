import Foundation
import Synchronization
import Testing

/// A unix socket in a temporary directory that plays a broken bus: every connection it accepts
/// gets `behaviour`, then is read until the client closes its end, so a test can tell that the
/// client let go of its socket (`peersClosed`). Nothing here is a real bus; it only speaks as
/// much of the SASL handshake as a behaviour needs.
final class HostileBus: Sendable {
    enum Behaviour: Sendable {
        /// Accepts, then says nothing.
        case silent
        /// Answers the handshake with bytes that are not SASL, then waits.
        case garbage
        /// Accepts and closes at once.
        case closeAtOnce
        /// Completes authentication (EXTERNAL, unix fds agreed), then never answers Hello.
        case authenticateThenSilent
        /// Completes authentication, then closes instead of answering Hello.
        case authenticateThenClose
        /// Does not accept (until `acceptNow`), and its accept queue is full: a client's connect(2)
        /// itself blocks.
        case fullBacklog
    }

    private let listener: HostileListener

    init(_ behaviour: Behaviour) throws { listener = try HostileListener(behaviour) }

    var address: String { listener.address }
    /// Connections accepted so far.
    var accepted: Int { listener.accepted }
    /// Connections whose SASL handshake the bus has finished (`BEGIN` received).
    var authenticated: Int { listener.authenticated }

    /// Waits until the client has closed `expected` connections that the bus kept open; true if
    /// it did within `timeout`.
    func peersClosed(expected: Int, within timeout: Duration = .seconds(10)) async -> Bool {
        await listener.peersClosed(expected: expected, within: timeout)
    }

    /// Waits until the client has closed every connection accepted so far that the bus kept open.
    func allPeersClosed(within timeout: Duration = .seconds(10)) async -> Bool {
        await listener.allPeersClosed(within: timeout)
    }

    /// A `fullBacklog` bus starts accepting (and then stays silent): connects blocked in connect(2)
    /// go through, after the queued filler.
    func acceptNow() { listener.acceptNow() }

    /// Stops listening and closes every connection still open (also done when the bus goes away).
    func stop() { listener.stop() }

    deinit {
        listener.stop()
        try? FileManager.default.removeItem(at: listener.directory)
    }
}

/// The listener behind a `HostileBus`; its threads hold it, not the bus, so that the bus going
/// away stops them.
private final class HostileListener: Sendable {
    typealias Behaviour = HostileBus.Behaviour

    private struct State {
        var accepted = 0
        var authenticated = 0
        var peerClosed = 0
        var open: Set<Int32> = []
        var stopped = false
        var accepting = false
    }

    let address: String
    let directory: URL
    private let listenFD: Int32
    /// The client that fills the accept queue (`fullBacklog`), or -1.
    private let fillerFD: Int32
    private let state = Mutex(State())

    init(_ behaviour: Behaviour) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hrm-hostile-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("bus").path
        address = "unix:path=\(path)"
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: addr.sun_path))
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        // A backlog of 0 admits one queued connection; the filler takes it.
        try #require(listen(fd, behaviour == .fullBacklog ? 0 : 16) == 0)
        listenFD = fd
        if behaviour == .fullBacklog {
            let filler = socket(
                AF_UNIX,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                0)
            try #require(filler >= 0)
            let connected = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(connected == 0)
            fillerFD = filler
            return
        }
        fillerFD = -1
        startAccepting(behaviour)
    }

    private func startAccepting(_ behaviour: Behaviour) {
        let start = state.withLock { state -> Bool in
            if state.stopped || state.accepting { return false }
            state.accepting = true
            return true
        }
        if start {
            Thread { [self] in
                Thread.current.name = "hostile-accept"
                acceptLoop(behaviour)
            }.start()
        }
    }

    /// A `fullBacklog` bus starts accepting (and then stays silent): connects blocked in connect(2)
    /// go through, after the queued filler.
    func acceptNow() { startAccepting(.silent) }

    private func acceptLoop(_ behaviour: Behaviour) {
        while true {
            // accept4 is not exported to Swift; the window before FD_CLOEXEC is a few instructions.
            let client = accept(listenFD, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break  // stop() shut the listener down
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let keep = state.withLock { state -> Bool in
                if state.stopped { return false }
                state.accepted += 1
                state.open.insert(client)
                return true
            }
            guard keep else {
                close(client)
                continue
            }
            Thread { [self] in
                Thread.current.name = "hostile-serve"
                serve(client, behaviour)
            }.start()
        }
        close(listenFD)
    }

    private func serve(_ fd: Int32, _ behaviour: Behaviour) {
        switch behaviour {
        case .silent, .fullBacklog:
            break
        case .garbage:
            // Not SASL: binary junk and lines that are no command, then no newline at all.
            write(fd, [0xFF, 0x00, 0x13, 0x37] + Array("HELLO THERE\r\nREJECTED\u{1}\r\n\u{7F}garb".utf8))
        case .closeAtOnce:
            finish(fd, peerClosed: false)
            return
        case .authenticateThenSilent, .authenticateThenClose:
            guard authenticate(fd) else {
                finish(fd, peerClosed: true)
                return
            }
            state.withLock { $0.authenticated += 1 }
            if behaviour == .authenticateThenClose {
                finish(fd, peerClosed: false)
                return
            }
        }
        // Read (and drop) until the client closes its end.
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n > 0 || (n < 0 && errno == EINTR) { continue }
            break
        }
        finish(fd, peerClosed: true)
    }

    /// The server's half of the SASL handshake, just enough for libdbus: OK to AUTH, AGREE to
    /// NEGOTIATE_UNIX_FD, done at BEGIN. False if the client went away first.
    private func authenticate(_ fd: Int32) -> Bool {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            pending += buffer[0..<n].filter { $0 != 0 }  // the credentials byte
            while let end = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<end], as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                pending.removeSubrange(...end)
                if line.hasPrefix("AUTH EXTERNAL") {
                    write(fd, Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8))
                } else if line.hasPrefix("AUTH") {
                    write(fd, Array("REJECTED EXTERNAL\r\n".utf8))
                } else if line.hasPrefix("NEGOTIATE_UNIX_FD") {
                    write(fd, Array("AGREE_UNIX_FD\r\n".utf8))
                } else if line.hasPrefix("BEGIN") {
                    return true
                } else {
                    write(fd, Array("ERROR\r\n".utf8))
                }
            }
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private func finish(_ fd: Int32, peerClosed: Bool) {
        let owned = state.withLock { state -> Bool in
            if peerClosed { state.peerClosed += 1 }
            return state.open.remove(fd) != nil
        }
        if owned { close(fd) }
    }

    /// Connections accepted so far.
    var accepted: Int { state.withLock { $0.accepted } }
    var authenticated: Int { state.withLock { $0.authenticated } }

    /// Waits until the client has closed every connection that the behaviour kept open (and that
    /// was not closed by the bus itself); true if it did within `timeout`.
    func peersClosed(expected: Int, within timeout: Duration = .seconds(10)) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if state.withLock({ $0.peerClosed >= expected }) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return state.withLock { $0.peerClosed >= expected }
    }

    /// Waits until the client has closed every connection accepted so far that the bus kept open.
    func allPeersClosed(within timeout: Duration = .seconds(10)) async -> Bool {
        await eventually(within: timeout) { state.withLock { $0.open.isEmpty && $0.peerClosed > 0 } }
    }

    /// Stops listening and closes every connection still open (the accept loop closes the socket).
    func stop() {
        // Under the lock: a descriptor still in `open` has not been closed (and reused) yet.
        let first = state.withLock { state -> Bool in
            if state.stopped { return false }
            state.stopped = true
            for fd in state.open { shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
        if fillerFD >= 0 { close(fillerFD) }
        // The accept loop closes the listener when accept fails; without one, it is closed here.
        if !state.withLock({ $0.accepting }) { close(listenFD) }
    }

}

/// This process's open sockets and eventfds (`12=socket:[345]`), what a failed connect could
/// leak; other descriptors (files other tests hold) are left out.
func socketsAndEventFDs() -> [String] {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.sorted().compactMap { fd in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
            target.hasPrefix("socket:") || target == "anon_inode:[eventfd]"
        else { return nil }
        return "\(fd)=\(target)"
    }
}

/// This process's D-Bus loop threads (thread ids), by the name the DBus module gives them.
func loopThreads() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.sorted().filter { task in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return name.hasPrefix("dbus-loop")
    }
}

/// Waits until `condition` holds; true if it did within `timeout`.
func eventually(within timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}
