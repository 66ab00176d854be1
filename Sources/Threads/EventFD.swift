internal import CThreadShims
internal import Glibc

/// An eventfd(2) that wakes a loop thread sleeping in poll(2): the loop polls `descriptor` for
/// input and drains it; any thread signals it. The owner closes it (`close`) once the loop has
/// ended; the type is a plain value so that the loop and its owner can share it.
public struct EventFD: Sendable, Equatable {
    /// The file descriptor to poll for POLLIN.
    public let descriptor: Int32

    /// A new non-blocking, close-on-exec eventfd; nil (errno set) when none can be made.
    public init?() {
        let descriptor = hrm_eventfd()
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    /// Wakes the loop: adds one to the counter (never blocks; a full counter is awake anyway).
    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    /// Resets the counter after a wake-up, so that the next poll sleeps again.
    public func drain() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, 8)
    }

    /// Closes the descriptor; the value must not be used after.
    public func close() {
        _ = Glibc.close(descriptor)
    }
}
