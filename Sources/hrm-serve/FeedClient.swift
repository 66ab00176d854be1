import HRMCLI
import Synchronization

/// One feed client (SSE or WebSocket): a bounded queue between the session, which must never
/// wait, and the client's connection, which may be slow. A client whose queue is full is dropped
/// (its stream ends; it may reconnect and gets the current state again), so that it delays
/// nobody.
final class FeedClient: FeedListener {
    /// Events a client may fall behind by: minutes of a strap at 1 Hz, a second at 200 Hz.
    static let capacity = 256

    let lines: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let dropped = Mutex(false)

    init() {
        (lines, continuation) = AsyncStream.makeStream(
            of: String.self, bufferingPolicy: .bufferingOldest(Self.capacity))
    }

    func receive(_ line: String) {
        if case .dropped = continuation.yield(line) {
            dropped.withLock { $0 = true }
            continuation.finish()
        }
    }

    /// True when the client was dropped for falling behind.
    var fellBehind: Bool { dropped.withLock { $0 } }

    /// Ends the stream: the connection closes after what is queued.
    func close() { continuation.finish() }
}
