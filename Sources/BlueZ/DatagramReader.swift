import Synchronization
internal import Threads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads the SEQPACKET socket that AcquireNotify returns, one notification per datagram, on a
/// thread of its own: a blocking recv(2) there costs the cooperative pool nothing, wakes the moment
/// bluetoothd writes, and is one system call per notification.
///
/// A read of 0 bytes is an empty notification while the peer is still there; it is the end of the
/// stream once poll reports the peer gone (POLLHUP) and no datagram waits behind it, which is how
/// bluetoothd signals a drop. (An empty datagram sent just before that hang-up cannot be told from
/// the end: Linux reports both as 0 bytes. An empty frame carries no measurement, so nothing is
/// lost but an error count.)
final class DatagramReader: Sendable {
    private let socket: OpenSocket

    /// Takes ownership of `socket`: the reader closes it when it stops. `deliver` runs on the
    /// reader's thread (named `threadName`) for each datagram; `end` once, after the last one,
    /// told whether the peer ended the stream (false when `stop()` did).
    init(
        socket: Int32, mtu: Int, threadName: String = "hrm-notify",
        deliver: @escaping @Sendable ([UInt8]) -> Void,
        end: @escaping @Sendable (_ byPeer: Bool) -> Void
    ) throws(BlueZError) {
        // bluetoothd's end may come non-blocking; this thread waits in recv.
        let flags = fcntl(socket, F_GETFL)
        if flags >= 0 { _ = fcntl(socket, F_SETFL, flags & ~O_NONBLOCK) }
        let owned = OpenSocket(socket)
        self.socket = owned
        // A notification fits the ATT MTU; a larger buffer keeps an oversized one whole.
        let capacity = max(mtu, 23) + 512
        do {
            try DetachedThread.start("notify socket's reader", named: threadName) {
                let byPeer = Self.loop(socket: socket, capacity: capacity, owned: owned, deliver: deliver)
                // Closed under the lock: stop() never shuts down a descriptor number reused since.
                owned.descriptor.withLock { open in
                    if let fd = open { close(fd) }
                    open = nil
                }
                end(byPeer)
            }
        } catch {
            close(socket)
            throw error
        }
    }

    /// Checks that `socket` is what AcquireNotify promises, a SOCK_SEQPACKET socket; if it is not,
    /// closes it (bluetoothd, which thinks it acquired, sees the hang-up: that is the release)
    /// and throws what it is instead.
    static func requireSeqpacket(_ socket: Int32) throws(BlueZError) {
        guard let kind = kind(ofNonSeqpacket: socket) else { return }
        close(socket)
        throw BlueZError(.bluez, "AcquireNotify returned \(kind), not a SEQPACKET socket")
    }

    /// What `descriptor` is, in words, when it is not a SEQPACKET socket; nil when it is.
    static func kind(ofNonSeqpacket descriptor: Int32) -> String? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return "a descriptor fstat refuses (errno \(errno))" }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: break
        case S_IFIFO: return "a pipe"
        case S_IFREG: return "a regular file"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        default: return "a descriptor of file type 0o\(String(info.st_mode & S_IFMT, radix: 8))"
        }
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else {
            return "a socket of unknown type (errno \(errno))"
        }
        switch type {
        case Int32(SOCK_SEQPACKET.rawValue): return nil
        case Int32(SOCK_STREAM.rawValue): return "a stream socket"
        case Int32(SOCK_DGRAM.rawValue): return "a datagram socket"
        default: return "a socket of type \(type)"
        }
    }

    /// Releases the socket now (bluetoothd sees the hang-up at once; the blocked recv returns)
    /// and ends the thread, which closes it. Idempotent.
    func stop() {
        socket.stopping.store(true, ordering: .releasing)
        socket.descriptor.withLock { open in
            if let fd = open { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    deinit { stop() }

    private static func loop(
        socket: Int32, capacity: Int, owned: OpenSocket, deliver: @Sendable ([UInt8]) -> Void
    ) -> Bool {
        var buffer = [UInt8](repeating: 0, count: capacity)
        // The frame handed to `deliver`. Its memory serves the next frame when nothing kept the
        // last one (an output that queues events keeps it, and the append then makes new
        // memory, as arrays do): no allocation and no free a notification (#29).
        var frame: [UInt8] = []
        func stopping() -> Bool { owned.stopping.load(ordering: .acquiring) }
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if stopping() { return false }
            if count > 0 {
                frame.removeAll(keepingCapacity: true)
                buffer.withUnsafeBufferPointer {
                    frame.append(contentsOf: UnsafeBufferPointer(rebasing: $0[0..<count]))
                }
                deliver(frame)
                continue
            }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return true
            }
            // 0 bytes: an empty notification, unless the peer hung up with nothing queued.
            var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, 0)
            if entry.revents & Int16(POLLHUP) != 0 {
                let next = buffer.withUnsafeMutableBytes {
                    recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_PEEK))
                }
                if next <= 0 { return true }
            }
            deliver([])
        }
    }
}

private final class OpenSocket: Sendable {
    let descriptor: Mutex<Int32?>
    let stopping = Atomic(false)
    init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }
}

/// A thread of BlueZ's own (through `LoopThread`, hrm's one way to start one), its failure as a
/// `BlueZError` naming what it was for.
enum DetachedThread {
    static func start(_ what: String, named name: String, _ body: @escaping @Sendable () -> Void)
        throws(BlueZError)
    {
        do throws(LoopThread.StartError) {
            try LoopThread.start(named: name, body)
        } catch {
            throw BlueZError(.dbus, "cannot start the \(what) thread: \(error.message)")
        }
    }
}
