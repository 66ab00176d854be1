import HRMCLI
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Outputs
import Synchronization
import Threads

/// One feed client (SSE or WebSocket): a bounded queue between the session, which must never
/// wait, and the client's connection, which may be slow. A client whose queue is full is dropped:
/// its stream ends and its connection is closed at once (a write it is stuck in fails with it), so
/// that it delays nobody; it may reconnect and gets the current state again. A write that waits
/// longer than `ClientHub.stallLimit` (the client stopped reading) drops it too.
///
/// The feed writes to the connection from its event loop (`LoopWriter`): one hop to the loop per
/// event for all its clients, no task per client per event. The client's handler only hands over
/// (`goLive`) and waits for the end (`ended`).
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

    /// Events a client may fall behind by: minutes of a strap at 1 Hz, a second at 200 Hz. The
    /// queue and what the connection has not written yet count together.
    static let capacity = 256

    let kind: Kind
    let channel: any Channel
    /// Who it is, for `--verbose`: the peer's address.
    let peer: String
    private let messages: FeedMessages
    private let loop: LoopWriter

    private struct State {
        var ending: Ending? = nil
        /// The connection takes the feed's writes (its handler ran); until then events wait here.
        var live = false
        /// Events not yet handed to the connection, oldest first.
        var outbox: [ByteBuffer] = []
        /// Events handed to the connection and not written to its socket yet.
        var unwritten = 0
        /// When the write under way began; nil between writes.
        var writingSince: ContinuousClock.Instant? = nil
        /// The stream is over: dropped, the connection gone, or stopping with all written.
        var over = false
        /// Waiting for `over` (`ended`).
        var endWaiters = Waiters()

        /// The waiters to wake when the stream is over (a stop ends it once all is written).
        mutating func settle() -> [CheckedContinuation<Void, Never>] {
            if ending == .shutdown, outbox.isEmpty, unwritten == 0 { over = true }
            return over ? endWaiters.takeAll() : []
        }
    }
    private let state = Mutex(State())

    init(kind: Kind, channel: any Channel, messages: FeedMessages, loop: LoopWriter) {
        self.kind = kind
        self.channel = channel
        self.messages = messages
        self.loop = loop
        peer = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
    }

    /// From the session (under its lock): queue the line, or drop the client. Never waits.
    func receive(_ line: String) {
        enqueue(messages.encoded(line, for: kind))
    }

    /// A keep-alive for SSE (an idle proxy or browser would otherwise give up on the stream).
    func keepAlive() {
        enqueue(FeedMessages.keepAlive)
    }

    private func enqueue(_ message: ByteBuffer) {
        enum Outcome { case ignored, queued, first, full }
        let outcome = state.withLock { state -> Outcome in
            guard state.ending == nil, !state.over else { return .ignored }
            guard state.outbox.count + state.unwritten < Self.capacity else { return .full }
            state.outbox.append(message)
            return state.live && state.outbox.count == 1 ? .first : .queued
        }
        switch outcome {
        case .full: drop(.fellBehind)
        case .first: loop.schedule(self)
        case .ignored, .queued: break
        }
    }

    /// The connection is ready: `first` (the current state) goes out, then what waited, then
    /// every event as it comes. From a hop to the event loop of its own, taken after what the
    /// caller wrote before (an SSE response's head and first write, through Hummingbird): the
    /// loop's writer may already have a hop pending from before those, and must not write this
    /// client's events ahead of its head.
    func goLive(first: [ByteBuffer] = []) {
        channel.eventLoop.execute { [self] in
            let pending = state.withLock { state -> Bool in
                state.live = true
                state.outbox.insert(contentsOf: first, at: 0)
                return !state.outbox.isEmpty
            }
            if pending { writeQueued() }
        }
    }

    /// On the connection's event loop (`LoopWriter`): what is queued, in one flush.
    func writeQueued() {
        let now = ContinuousClock.now
        let batch = state.withLock { state -> [ByteBuffer] in
            let batch = state.outbox
            state.outbox = []
            guard !state.over, !batch.isEmpty else { return [] }
            if state.unwritten == 0 { state.writingSince = now }
            state.unwritten += batch.count
            return batch
        }
        guard let message = Self.joined(batch, allocator: channel.allocator) else { return }
        let written = channel.eventLoop.makePromise(of: Void.self)
        switch kind {
        case .webSocket:
            // Whole frames, made once for every client (`FeedMessages`): written below NIO's frame
            // encoder, which would frame each again for each client.
            if let encoder = try? channel.pipeline.syncOperations.context(
                handlerType: WebSocketFrameEncoder.self)
            {
                encoder.writeAndFlush(NIOAny(IOData.byteBuffer(message)), promise: written)
            } else {
                written.fail(ChannelError.ioOnClosedChannel)
            }
        case .sse:
            // Below Hummingbird's HTTP types, as NIO's HTTP/1 encoder takes them: the response's
            // head went out through Hummingbird before the client went live.
            if let gate = try? channel.pipeline.syncOperations.context(handlerType: RequestGate.self) {
                gate.writeAndFlush(
                    NIOAny(HTTPServerResponsePart.body(.byteBuffer(message))), promise: written)
            } else {
                written.fail(ChannelError.ioOnClosedChannel)
            }
        }
        written.futureResult.whenComplete { [self] _ in wrote(batch.count) }
    }

    /// The events of a round in one buffer (whole WebSocket frames or SSE events, one after
    /// another): one write down the pipeline and one chunk instead of one per event. Nil when
    /// there are none.
    static func joined(_ batch: [ByteBuffer], allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard let first = batch.first else { return nil }
        guard batch.count > 1 else { return first }
        var joined = allocator.buffer(capacity: batch.reduce(0) { $0 + $1.readableBytes })
        for var message in batch { joined.writeBuffer(&message) }
        return joined
    }

    /// `count` events were written to the socket (or failed with the connection).
    private func wrote(_ count: Int) {
        let waiters = state.withLock { state in
            state.unwritten -= count
            state.writingSince = state.unwritten > 0 ? .now : nil
            return state.settle()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the stream is over (dropped, gone, or stopping with everything written), or
    /// at once when cancelled.
    func ended() async {
        await state.wait(in: \.endWaiters) { $0.over }
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
        end(why)
        channel.close(promise: nil)
    }

    /// The connection went: nothing more to write.
    func gone() { end(nil) }

    private func end(_ why: Ending?) {
        let waiters = state.withLock { state in
            if state.ending == nil { state.ending = why }
            state.over = true
            state.outbox = []
            return state.settle()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The session is stopping: the stream ends after what is queued, and the connection closes
    /// once that is written (the hub closes it anyway if that takes too long).
    func finish() {
        let waiters = state.withLock { state in
            if state.ending == nil { state.ending = .shutdown }
            return state.settle()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Closes the connection at once (a client still there after the shutdown's grace).
    func close() { channel.close(promise: nil) }

    var ending: Ending? { state.withLock { $0.ending } }
}

/// The bytes of the feed's events, made once per event for every client (each client's
/// `receive` gets the same line in turn, under the session's lock).
final class FeedMessages: Sendable {
    /// An SSE comment: keeps an idle stream alive.
    static let keepAlive = ByteBuffer(string: ": keep-alive\n\n")

    private struct Last {
        var line = ""
        var webSocket: ByteBuffer? = nil
        var sse: ByteBuffer? = nil
    }
    private let last = Mutex(Last())

    /// A WebSocket text frame of the line, whole (a server's frames are not masked; RFC 6455 5.2).
    static func webSocket(_ line: String) -> ByteBuffer {
        let length = line.utf8.count
        var buffer = ByteBufferAllocator().buffer(capacity: length + 10)
        buffer.writeInteger(UInt8(0x81))  // FIN, text
        if length < 126 {
            buffer.writeInteger(UInt8(length))
        } else if length <= Int(UInt16.max) {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
        buffer.writeString(line)
        return buffer
    }

    /// An SSE event: `data: LINE` and a blank line.
    static func sse(_ line: String) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: line.utf8.count + 8)
        buffer.writeString("data: ")
        buffer.writeString(line)
        buffer.writeString("\n\n")
        return buffer
    }

    /// `line` as `kind` sends it; the same bytes for every client of a kind (the comparison is
    /// one of storage when the line is the one just encoded).
    func encoded(_ line: String, for kind: FeedClient.Kind) -> ByteBuffer {
        last.withLock { last in
            if last.line != line { last = Last(line: line) }
            switch kind {
            case .webSocket:
                if let buffer = last.webSocket { return buffer }
                let buffer = Self.webSocket(line)
                last.webSocket = buffer
                return buffer
            case .sse:
                if let buffer = last.sse { return buffer }
                let buffer = Self.sse(line)
                last.sse = buffer
                return buffer
            }
        }
    }
}

/// The feed clients of one event loop with events to write: one hop to the loop writes them all,
/// however many clients there are, and at most one round of writes goes out per `WritePace`
/// interval (what comes sooner waits for it, and goes out with the rest).
final class LoopWriter: Sendable {
    let loop: any EventLoop
    private struct Pending {
        var clients: [FeedClient] = []
        var scheduled = false
        var pace = WritePace<ContinuousClock.Instant>()
    }
    private let pending = Mutex(Pending())

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// `client` has events queued (its first since its last write).
    func schedule(_ client: FeedClient) {
        let delay = pending.withLock { pending -> Duration? in
            pending.clients.append(client)
            guard !pending.scheduled else { return nil }
            pending.scheduled = true
            return pending.pace.delay(at: .now)
        }
        guard let delay else { return }
        if delay == .zero {
            loop.execute { self.run() }
        } else {
            loop.scheduleTask(in: TimeAmount(delay)) { self.run() }
        }
    }

    private func run() {
        let now = ContinuousClock.now
        let clients = pending.withLock { pending -> [FeedClient] in
            defer {
                pending.clients = []
                pending.scheduled = false
                pending.pace.wrote(at: now)
            }
            return pending.clients
        }
        for client in clients { client.writeQueued() }
    }
}
