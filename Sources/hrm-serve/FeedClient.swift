import HRMCLI
import NIOCore
import Outputs
import Synchronization

/// One feed client (SSE or WebSocket): a bounded queue between the session, which must never
/// wait, and the client's connection, which may be slow. A client whose queue is full is dropped:
/// its stream ends and its connection is closed at once (a write it is stuck in fails with it), so
/// that it delays nobody; it may reconnect and gets the current state again. A write that waits
/// longer than `ClientHub.stallLimit` (the client stopped reading) drops it too.
final class FeedClient: FeedListener {
    enum Kind: String, Sendable {
        case sse = "SSE"
        case webSocket = "WebSocket"

        /// "an SSE client", "a WebSocket client".
        var aClient: String { self == .sse ? "an SSE client" : "a WebSocket client" }
    }

    /// Why a client went.
    enum Ending: Sendable, Equatable {
        case fellBehind
        case stalled
        case shutdown
    }

    /// Events a client may fall behind by: minutes of a strap at 1 Hz, a second at 200 Hz.
    static let capacity = 256
    /// In `lines`: not an event but a keep-alive (an SSE comment), queued by the hub's ticker.
    static let keepAlive = ""

    let kind: Kind
    let channel: any Channel
    /// Who it is, for `--verbose`: the peer's address.
    let peer: String
    let lines: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    private struct State {
        var ending: Ending? = nil
        /// When the write under way began; nil between writes.
        var writingSince: ContinuousClock.Instant? = nil
    }
    private let state = Mutex(State())

    init(kind: Kind, channel: any Channel) {
        self.kind = kind
        self.channel = channel
        peer = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
        (lines, continuation) = AsyncStream.makeStream(
            of: String.self, bufferingPolicy: .bufferingOldest(Self.capacity))
    }

    /// From the session (under its lock): queue the line, or drop the client. Never waits.
    func receive(_ line: String) {
        if case .dropped = continuation.yield(line) { drop(.fellBehind) }
    }

    /// A keep-alive for SSE (an idle proxy or browser would otherwise give up on the stream).
    func keepAlive() {
        if case .dropped = continuation.yield(Self.keepAlive) { drop(.fellBehind) }
    }

    /// Runs one write of this client's connection, so that the hub can tell one that waits too long.
    func writing<Result>(_ write: () async throws -> Result) async rethrows -> Result {
        state.withLock { $0.writingSince = .now }
        defer { state.withLock { $0.writingSince = nil } }
        return try await write()
    }

    /// True when a write has waited longer than `limit`.
    func stalled(longerThan limit: Duration, now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in state.writingSince.map { now - $0 > limit } ?? false }
    }

    /// Drops the client now: its stream ends and its connection closes, whatever it was doing.
    func drop(_ why: Ending) {
        state.withLock { state in if state.ending == nil { state.ending = why } }
        continuation.finish()
        channel.close(promise: nil)
    }

    /// The session is stopping: the stream ends after what is queued, and the connection closes
    /// once that is written (the hub closes it anyway if that takes too long).
    func finish() {
        state.withLock { state in if state.ending == nil { state.ending = .shutdown } }
        continuation.finish()
    }

    /// Closes the connection at once (a client still there after the shutdown's grace).
    func close() { channel.close(promise: nil) }

    var ending: Ending? { state.withLock { $0.ending } }
}
