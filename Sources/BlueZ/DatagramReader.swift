import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads the SEQPACKET socket that AcquireNotify returns, one notification per datagram, on a
/// thread of its own: a blocking poll(2) there costs the cooperative pool nothing and wakes the
/// moment bluetoothd writes.
///
/// A read of 0 bytes is an empty notification while the peer is still there; it is the end of the
/// stream once poll reports the peer gone (POLLHUP), which is how bluetoothd signals a drop. (An
/// empty datagram sent just before that hang-up cannot be told from the end: Linux reports both
/// as 0 bytes. An empty frame carries no measurement, so nothing is lost but an error count.)
final class DatagramReader: Sendable {
    /// The socket while it is open; the thread closes it under the lock, so `stop()` never
    /// touches a descriptor number that has been reused.
    private let socket: OpenSocket
    private let wakeWrite: Int32

    /// Takes ownership of `socket`: the reader closes it when it stops. `deliver` runs on the
    /// reader's thread for each datagram; `end` once, after the last one, told whether the peer
    /// ended the stream (false when `stop()` did).
    init(
        socket: Int32, mtu: Int, deliver: @escaping @Sendable ([UInt8]) -> Void,
        end: @escaping @Sendable (_ byPeer: Bool) -> Void
    ) throws(BlueZError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(socket)
            throw BlueZError(.dbus, "cannot create a pipe for the notify socket (errno \(errno))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        let owned = OpenSocket(socket)
        self.socket = owned
        wakeWrite = ends[1]
        let wake = ends[0]
        // A notification fits the ATT MTU; a larger buffer keeps an oversized one whole.
        let capacity = max(mtu, 23) + 512
        do {
            try ReaderThread.start {
                let byPeer = Self.loop(socket: socket, wake: wake, capacity: capacity, deliver: deliver)
                // Both ends close under the lock: stop() then neither shuts down a reused number
                // nor writes into a pipe nobody reads (SIGPIPE).
                owned.descriptor.withLock { open in
                    if let fd = open { close(fd) }
                    open = nil
                    close(wake)
                }
                end(byPeer)
            }
        } catch {
            close(socket)
            close(ends[0])
            close(ends[1])
            throw error
        }
    }

    /// Releases the socket now (bluetoothd sees the hang-up at once) and ends the thread, which
    /// closes it. Idempotent.
    func stop() {
        socket.descriptor.withLock { open in
            guard let fd = open else { return }
            _ = shutdown(fd, Int32(SHUT_RDWR))
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    deinit {
        stop()
        close(wakeWrite)
    }

    private static func loop(
        socket: Int32, wake: Int32, capacity: Int, deliver: @Sendable ([UInt8]) -> Void
    ) -> Bool {
        var buffer = [UInt8](repeating: 0, count: capacity)
        var entries = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            entries[0].revents = 0
            entries[1].revents = 0
            let ready = poll(&entries, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return true
            }
            if entries[1].revents != 0 { return false }
            let events = entries[0].revents
            guard events & Int16(POLLIN) != 0 else {
                if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return true }
                continue
            }
            let count = buffer.withUnsafeMutableBytes {
                recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count > 0 {
                deliver(Array(buffer[0..<count]))
            } else if count == 0 {
                // After a hang-up, 0 bytes is the end unless more datagrams wait behind it.
                let next = buffer.withUnsafeMutableBytes {
                    recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_PEEK))
                }
                if events & Int16(POLLHUP) != 0 && next <= 0 { return true }
                deliver([])
            } else if errno != EAGAIN && errno != EINTR {
                return true
            }
        }
    }
}

private final class OpenSocket: Sendable {
    let descriptor: Mutex<Int32?>
    init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }
}

/// A detached thread running one closure.
private enum ReaderThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(_ body: @escaping @Sendable () -> Void) throws(BlueZError) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw BlueZError(.dbus, "cannot start the notify socket's reader thread (error \(rc))")
        }
        pthread_detach(thread)
    }
}
