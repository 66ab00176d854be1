import DBus
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// One value a simulated consumer received: the application's characteristic it came from, the
/// bytes, and when it arrived (CLOCK_MONOTONIC, as a strap's `notify` in the log).
struct ConsumerValue: Sendable {
    let path: ObjectPath
    let bytes: [UInt8]
    let monoNanos: UInt64
}

/// The consumers' inboxes, by consumer: what bluetoothd hands each subscribed central, from a
/// StartNotify session's PropertiesChanged or an AcquireNotify socket alike. Any thread may
/// deliver (the socket's reader does, without a hop to the simulator's actor).
final class ConsumerInboxes: Sendable {
    private let inboxes = Mutex<
        [Int: (continuation: AsyncStream<ConsumerValue>.Continuation, paths: Set<ObjectPath>)]
    >(
        [:])

    /// A new inbox for consumer `index`, taking values of `paths` (its subscriptions).
    func open(_ index: Int, paths: Set<ObjectPath>) -> AsyncStream<ConsumerValue> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ConsumerValue.self, bufferingPolicy: .bufferingNewest(1024))
        let old = inboxes.withLock { inboxes in
            defer { inboxes[index] = (continuation, paths) }
            return inboxes[index]?.continuation
        }
        old?.finish()
        return stream
    }

    /// Consumer `index` takes no more values of `path`.
    func unsubscribe(_ index: Int, from path: ObjectPath) {
        inboxes.withLock { _ = $0[index]?.paths.remove(path) }
    }

    /// The inbox of `index` is closed (the consumer left).
    func close(_ index: Int) {
        inboxes.withLock { $0.removeValue(forKey: index) }?.continuation.finish()
    }

    /// Hands `value` to consumer `index` if it is subscribed to its characteristic (a StartNotify
    /// session's PropertiesChanged, which each consumer receives on its own).
    func deliver(_ value: ConsumerValue, to index: Int) {
        let receiver = inboxes.withLock { inboxes in
            inboxes[index].flatMap { $0.paths.contains(value.path) ? $0.continuation : nil }
        }
        receiver?.yield(value)
    }

    /// Hands `value` to every consumer subscribed to its characteristic.
    func deliver(_ value: ConsumerValue) {
        let receivers = inboxes.withLock { inboxes in
            inboxes.values.filter { $0.paths.contains(value.path) }.map(\.continuation)
        }
        for receiver in receivers { receiver.yield(value) }
    }
}

/// bluetoothd's end of a characteristic a client serves by AcquireNotify: a thread reads each
/// datagram (one notification) and hands it to the subscribed consumers; `close` is the last
/// central gone (bluetoothd's io_destroy), which the client sees as a hang-up.
final class AcquiredNotifyReader: Sendable {
    private let descriptor: Mutex<Int32?>

    /// Starts reading `fd` (taken) for the characteristic at `path`.
    init(fd: Int32, path: ObjectPath, inboxes: ConsumerInboxes) throws {
        descriptor = Mutex(fd)
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        do {
            try LoopThread.start(named: "sim-acquired") { [self] in
                // The thread closes the descriptor, once it no longer reads it: `close` only shuts
                // it down, so that a number reused meanwhile is never read.
                defer {
                    descriptor.withLock { open in
                        if let fd = open { Glibc.close(fd) }
                        open = nil
                    }
                }
                var buffer = [UInt8](repeating: 0, count: 1024)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if count < 0 && errno == EINTR { continue }
                    // 0: the client let go (or `close` shut it down); an error ends it too.
                    guard count > 0 else { break }
                    inboxes.deliver(
                        ConsumerValue(
                            path: path, bytes: Array(buffer[0..<count]), monoNanos: monotonicNanos()))
                }
            }
        } catch {
            descriptor.withLock { $0 = nil }
            Glibc.close(fd)
            throw error
        }
    }

    /// Lets go: the client sees the hang-up; the reader thread ends and closes the descriptor.
    /// Idempotent.
    func close() {
        descriptor.withLock { open in
            if let fd = open { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
