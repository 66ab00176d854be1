internal import CMosquitto
internal import CMosquittoShims
internal import Glibc
import Synchronization
internal import Threads

/// An MQTT 3.1.1 client that keeps itself connected: publish never blocks and never fails because
/// the broker is away (an ordered, bounded outbox holds what the broker has not acknowledged),
/// subscriptions are made again after each reconnect, and close() leaves cleanly.
///
/// One thread of its own (named "mqtt-loop") owns libmosquitto and the network; the methods here
/// only touch in-memory state under a lock and wake that thread. Dropping the client without
/// close() ends its link abruptly, as a crash would: the broker publishes the will.
public final class MQTTClient: Sendable {
    private let core: ClientCore
    private let stream: AsyncStream<MQTTEvent>

    /// A client for the broker at `url`; connects nothing and starts no thread until `connect()`.
    ///
    /// - Throws: `MQTTError` with code `.failed` when libmosquitto cannot be loaded, the client id or
    ///   the will's topic is unusable, or no eventfd can be made; `.tls` when `caFile` is unreadable.
    public init(_ url: MQTTBrokerURL, options: MQTTOptions) throws(MQTTError) {
        if let libraryFailure {
            throw MQTTError(
                .failed,
                "libmosquitto could not be loaded (\(libraryFailure)): install Debian's libmosquitto1")
        }
        if options.clientID.utf8.contains(0) {
            throw MQTTError(.failed, "the client id contains a NUL character")
        }
        if let will = options.will {
            guard !will.topic.utf8.contains(0),
                cmqtt_pub_topic_check(will.topic) == MosquittoResult.success
            else {
                throw MQTTError(.failed, "the will's topic '\(will.topic)' is not a topic one can publish to")
            }
        }
        if url.tls, let caFile = options.caFile, access(caFile, R_OK) != 0 {
            throw MQTTError(.tls, "cannot read the CA file \(caFile): \(systemMessage(errno))")
        }
        guard let wakeFD = EventFD() else {
            throw MQTTError(.failed, "cannot create an eventfd: \(systemMessage(errno))")
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: MQTTEvent.self, bufferingPolicy: .bufferingNewest(ClientCore.eventBuffer))
        self.stream = stream
        core = ClientCore(url: url, options: options, wakeFD: wakeFD, continuation: continuation)
    }

    deinit {
        core.abandon()
    }

    /// One consumer. Finishes after close(). Holds the newest 10 000 events if nobody reads.
    public var events: AsyncStream<MQTTEvent> { stream }

    /// The first connection: returns once the broker accepted it; throws `.refused` (credentials),
    /// `.unreachable`, `.tls`, `.timeout` (options.connectTimeout). After it succeeds the client
    /// keeps itself connected: when the broker goes away it reconnects by itself with backoff
    /// (reconnectDelay), forever, until close(). Once connected, another call returns at once.
    public func connect() async throws(MQTTError) {
        let core = self.core
        let id = core.newWaiterID()
        let result = await withTaskGroup(of: Void.self) { group in
            // The thread enforces the connect timeout itself; this child of the call is for when
            // it cannot, stuck in a getaddrinfo(3) that takes longer.
            group.addTask {
                try? await Task.sleep(for: core.options.connectTimeout + .milliseconds(250))
                if !Task.isCancelled { core.connectWaiterTimedOut(id) }
            }
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation {
                    (continuation: CheckedContinuation<Result<Void, MQTTError>, Never>) in
                    core.addConnectWaiter(id, continuation)
                }
            } onCancel: {
                core.cancelConnectWaiter(id)
            }
            group.cancelAll()
            return result
        }
        try result.get()
    }

    /// Never blocks and never fails because the broker is away: the message goes into the outbox
    /// (past outboxCapacity the oldest are dropped and `.dropped` says how many) and is sent when
    /// connected, in order. A QoS 1 message leaves the outbox only once the broker acknowledged it;
    /// what was sent but not acknowledged when the link dropped is sent again, in the original
    /// order, after the reconnect. Ignored once close() has begun.
    public func publish(_ message: MQTTMessage) {
        core.publish(CollectionOfOne(message))
    }

    /// Several messages, in order, as as many `publish(_:)` calls would, but with one wake-up of
    /// the client's thread for them all, which then hands them to the broker together (one TCP
    /// segment when they fit): what one event produces, published at once.
    public func publish(contentsOf messages: [MQTTMessage]) {
        core.publish(messages)
    }

    /// Subscriptions are remembered and made again after each reconnect.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) {
        core.subscribe(filter, qos: qos)
    }

    /// Messages still to be acknowledged (after close(): those that never were).
    public var outboxCount: Int { core.state.withLock { $0.outbox.count } }

    /// Clean stop: publishes `last` (e.g. a retained "offline" status) after everything queued,
    /// waits at most `timeout` for the outbox to drain (acknowledged), then sends DISCONNECT (so
    /// the will is NOT published), stops the client's thread, frees everything, and finishes
    /// `events`. Idempotent: a second call waits for the first. Before connect() succeeded there
    /// is no link to drain: it only stops.
    public func close(last: [MQTTMessage] = [], within timeout: Duration) async {
        let id = core.newWaiterID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            core.close(id, last: last, timeout: timeout, continuation)
        }
        await core.closeTimerEnded()
    }
}

/// libmosquitto loaded and initialised for the process, once (Swift runs a global's initialiser
/// once, thread-safely) and never undone: other clients may come later. Nil when ready, else why
/// it could not be loaded.
private let libraryFailure: String? = {
    var reason: UnsafePointer<CChar>? = nil
    guard cmqtt_load(&reason) == 0 else {
        return reason.map { String(cString: $0) } ?? "libmosquitto.so.1 could not be loaded"
    }
    _ = cmqtt_lib_init()
    return nil
}()

/// What the client and its loop thread share: the state under one lock, the eventfd that wakes the
/// thread, and the events' continuation.
final class ClientCore: Sendable {
    /// Outbox entries handed to libmosquitto at once (and its in-flight limit): small, so that what
    /// a dropped link had in flight is little to send again, and order never depends on the library.
    static let window = 32
    static let eventBuffer = 10_000
    /// `.dropped` events are added up over this long, not one per message.
    static let dropReportInterval: Duration = .milliseconds(250)

    let url: MQTTBrokerURL
    let options: MQTTOptions
    let state: Mutex<State>
    let wakeFD: EventFD
    let continuation: AsyncStream<MQTTEvent>.Continuation

    struct State {
        enum Mode: Equatable {
            /// Not connected and not trying: before connect(), or after the first attempt failed.
            case idle
            /// connect() is waiting for the first attempt.
            case starting
            /// Connected once: keep connected.
            case running
            /// close() is draining the outbox until the deadline (monotonic nanoseconds).
            case closing(deadline: UInt64)
            case closed
        }

        var mode = Mode.idle
        /// Bumped by each connect() that starts from idle, so the thread knows a new first attempt
        /// is wanted even if it had not yet noticed the previous one failed.
        var generation: UInt64 = 0
        var threadRunning = false
        /// The current link got the broker's CONNACK.
        var linkAccepted = false
        /// The eventfd was written and the thread has not yet looked at the state since.
        var wakePending = false
        var outbox: Outbox
        var subscriptions: [(filter: String, qos: MQTTQoS)] = []
        var subscriptionsVersion = 0
        var droppedUnreported = 0
        var connectWaiters: [UInt64: CheckedContinuation<Result<Void, MQTTError>, Never>] = [:]
        var cancelledWaiters: Set<UInt64> = []
        var closeWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID: UInt64 = 0
        /// close()'s watchdog (see `close`): cancelled when the close is done, and waited for by
        /// close() before it returns.
        var closeTimer: Task<Void, Never>? = nil
    }

    init(
        url: MQTTBrokerURL, options: MQTTOptions, wakeFD: EventFD,
        continuation: AsyncStream<MQTTEvent>.Continuation
    ) {
        self.url = url
        self.options = options
        self.wakeFD = wakeFD
        self.continuation = continuation
        state = Mutex(State(outbox: Outbox(capacity: options.outboxCapacity)))
    }

    deinit {
        wakeFD.close()
    }

    func wake() {
        wakeFD.signal()
    }

    func newWaiterID() -> UInt64 {
        state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
    }

    // MARK: Called by MQTTClient, from any thread

    func addConnectWaiter(_ id: UInt64, _ continuation: CheckedContinuation<Result<Void, MQTTError>, Never>) {
        enum Action { case resume(Result<Void, MQTTError>), wait, started(newThread: Bool) }
        let action = state.withLock { state -> Action in
            if state.cancelledWaiters.remove(id) != nil { return .resume(.failure(Self.cancelled)) }
            switch state.mode {
            case .closing, .closed: return .resume(.failure(MQTTError(.failed, "the client is closed")))
            case .running: return .resume(.success(()))
            case .starting:
                state.connectWaiters[id] = continuation
                return .wait
            case .idle:
                state.connectWaiters[id] = continuation
                state.mode = .starting
                state.generation += 1
                if state.threadRunning { return .started(newThread: false) }
                state.threadRunning = true
                return .started(newThread: true)
            }
        }
        switch action {
        case .resume(let result): continuation.resume(returning: result)
        case .wait: break
        case .started(let newThread):
            if newThread {
                let core = self
                do throws(LoopThread.StartError) {
                    try LoopThread.start(named: "mqtt-loop") { Engine(core: core).run() }
                } catch {
                    let waiters = state.withLock { state in
                        state.threadRunning = false
                        state.mode = .idle
                        defer { state.connectWaiters = [:] }
                        return Array(state.connectWaiters.values)
                    }
                    for waiter in waiters {
                        waiter.resume(
                            returning: .failure(
                                MQTTError(.failed, "cannot start the MQTT thread: \(error.message)")))
                    }
                    return
                }
            } else {
                wake()
            }
        }
    }

    /// connect()'s watchdog went off: the attempt the waiter `id` waits for (if it still does)
    /// fails with the timeout, as the thread would have failed it.
    func connectWaiterTimedOut(_ id: UInt64) {
        let generation = state.withLock { state -> UInt64? in
            guard state.mode == .starting, state.connectWaiters[id] != nil else { return nil }
            return state.generation
        }
        guard let generation else { return }
        firstAttemptFailed(timeoutError(options.connectTimeout), generation: generation)
    }

    static let cancelled = MQTTError(.failed, "the connection attempt was cancelled")

    func timeoutError(_ timeout: Duration) -> MQTTError {
        MQTTError(
            .timeout, "the broker at \(url.address) did not accept the connection within \(timeout.shortText)"
        )
    }

    func cancelConnectWaiter(_ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Void, MQTTError>, Never>? in
            guard let waiter = state.connectWaiters.removeValue(forKey: id) else {
                state.cancelledWaiters.insert(id)
                return nil
            }
            // Nobody else waits for this attempt: give it up.
            if state.connectWaiters.isEmpty, state.mode == .starting { state.mode = .idle }
            return waiter
        }
        guard let waiter else { return }
        wake()
        waiter.resume(returning: .failure(Self.cancelled))
    }

    /// Appends `messages` to the outbox under one lock, so that the thread, woken once, finds
    /// them all.
    func publish(_ messages: some Collection<MQTTMessage>) {
        let wakeNeeded = state.withLock { state -> Bool in
            switch state.mode {
            case .closing, .closed: return false
            case .idle, .starting, .running: break
            }
            var dropped = 0
            for message in messages { dropped += state.outbox.append(message) }
            var wanted = state.linkAccepted && state.outbox.handed < Self.window
            if dropped > 0 {
                wanted = wanted || state.droppedUnreported == 0
                state.droppedUnreported += dropped
            }
            guard wanted, !state.wakePending else { return false }
            state.wakePending = true
            return true
        }
        if wakeNeeded { wake() }
    }

    func subscribe(_ filter: String, qos: MQTTQoS) {
        let wakeNeeded = state.withLock { state -> Bool in
            if let index = state.subscriptions.firstIndex(where: { $0.filter == filter }) {
                state.subscriptions[index].qos = qos
            } else {
                state.subscriptions.append((filter, qos))
            }
            state.subscriptionsVersion += 1
            return state.linkAccepted
        }
        if wakeNeeded { wake() }
    }

    func close(
        _ id: UInt64, last: [MQTTMessage], timeout: Duration, _ waiter: CheckedContinuation<Void, Never>
    ) {
        enum Action { case resume, wait, stopped([CheckedContinuation<Result<Void, MQTTError>, Never>]) }
        let action = state.withLock { state -> Action in
            switch state.mode {
            case .closed: return .resume
            case .closing:
                state.closeWaiters[id] = waiter
                return .wait
            case .idle, .starting:
                state.mode = .closed
                defer { state.connectWaiters = [:] }
                return .stopped(Array(state.connectWaiters.values))
            case .running:
                for message in last { state.droppedUnreported += state.outbox.append(message) }
                state.mode = .closing(deadline: monotonicNanos() &+ timeout.clampedNanoseconds)
                state.closeWaiters[id] = waiter
                return .wait
            }
        }
        switch action {
        case .resume: waiter.resume()
        case .wait:
            wake()
            // The thread ends the close at the deadline; this is for when it cannot (getaddrinfo).
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout + .seconds(1))
                guard !Task.isCancelled else { return }
                self?.finishClose()
            }
            let previous = state.withLock { state in
                defer { state.closeTimer = timer }
                return state.closeTimer
            }
            previous?.cancel()
        case .stopped(let waiters):
            wake()
            for connecting in waiters {
                connecting.resume(returning: .failure(MQTTError(.failed, "the client was closed")))
            }
            continuation.finish()
            waiter.resume()
        }
    }

    /// The client was dropped without close(): stop at once, without DISCONNECT.
    func abandon() {
        let timer = state.withLock { state in
            state.mode = .closed
            return state.closeTimer
        }
        timer?.cancel()
        wake()
        continuation.finish()
    }

    // MARK: Called by the loop thread

    struct Snapshot {
        var mode: State.Mode
        var generation: UInt64
        var dropped: Int
        var outboxEmpty: Bool
    }

    /// What the thread needs to decide its next step; nil once it should stop (then it is no longer
    /// counted as running, all under the lock, so connect() starts a new one if needed).
    func snapshot(reportDrops: Bool) -> Snapshot? {
        state.withLock { state -> Snapshot? in
            state.wakePending = false
            switch state.mode {
            case .idle, .closed:
                state.threadRunning = false
                state.linkAccepted = false
                return nil
            case .starting, .running, .closing: break
            }
            var dropped = 0
            if reportDrops {
                dropped = state.droppedUnreported
                state.droppedUnreported = 0
            }
            return Snapshot(
                mode: state.mode, generation: state.generation, dropped: dropped,
                outboxEmpty: state.outbox.count == 0)
        }
    }

    var hasUnreportedDrops: Bool { state.withLock { $0.droppedUnreported > 0 } }

    /// The first attempt of `generation` failed (or timed out): connect() throws.
    func firstAttemptFailed(_ error: MQTTError, generation: UInt64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Void, MQTTError>, Never>] in
            guard state.mode == .starting, state.generation == generation else { return [] }
            state.mode = .idle
            defer { state.connectWaiters = [:] }
            return Array(state.connectWaiters.values)
        }
        guard !waiters.isEmpty else { return }
        wake()
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
    }

    /// Whether an attempt that failed was the first of `generation` (connect() gets the error) or
    /// a reconnection (the thread tries again later).
    func isFirstAttempt(generation: UInt64) -> Bool {
        state.withLock { $0.mode == .starting && $0.generation == generation }
    }

    func linkAccepted() {
        let (waiters, announce) = state.withLock {
            state -> ([CheckedContinuation<Result<Void, MQTTError>, Never>], Bool) in
            state.linkAccepted = true
            switch state.mode {
            case .starting:
                state.mode = .running
                defer { state.connectWaiters = [:] }
                return (Array(state.connectWaiters.values), true)
            case .running: return ([], true)
            case .idle, .closing, .closed: return ([], false)
            }
        }
        if announce { continuation.yield(.connected) }
        for waiter in waiters { waiter.resume(returning: .success(())) }
    }

    func linkLost(reason: String) {
        let announce = state.withLock { state -> Bool in
            state.linkAccepted = false
            state.outbox.linkLost()
            return state.mode == .running
        }
        if announce { continuation.yield(.disconnected(reason: reason)) }
    }

    /// What to hand the link next, new subscriptions (nil when unchanged since `version`), and
    /// the entries handed once these are (the ones still to be acknowledged among them).
    func takeForLink(subscriptionsAfter version: Int) -> (
        messages: [(sequence: UInt64, message: MQTTMessage)],
        subscriptions: [(filter: String, qos: MQTTQoS)]?,
        version: Int,
        handed: Int
    ) {
        state.withLock { state in
            let messages = state.outbox.take(window: Self.window)
            let changed = state.subscriptionsVersion != version
            return (
                messages, changed ? state.subscriptions : nil, state.subscriptionsVersion, state.outbox.handed
            )
        }
    }

    func recordPublished(_ published: [(sequence: UInt64, mid: Int32)], rejected: [UInt64]) {
        guard !published.isEmpty || !rejected.isEmpty else { return }
        state.withLock { state in
            for (sequence, mid) in published { state.outbox.published(sequence: sequence, mid: mid) }
            for sequence in rejected { state.outbox.rejected(sequence: sequence) }
        }
    }

    func acknowledged(mid: Int32) {
        state.withLock { $0.outbox.acknowledge(mid: mid) }
    }

    /// close() is done (drained, timed out, or the thread could not finish): resume its waiters
    /// and finish the events.
    func finishClose() {
        let (waiters, timer) = state.withLock {
            state -> ([CheckedContinuation<Void, Never>], Task<Void, Never>?) in
            guard case .closing = state.mode else { return ([], nil) }
            state.mode = .closed
            state.linkAccepted = false
            defer { state.closeWaiters = [:] }
            return (Array(state.closeWaiters.values), state.closeTimer)
        }
        guard !waiters.isEmpty else { return }
        timer?.cancel()
        wake()
        continuation.finish()
        for waiter in waiters { waiter.resume() }
    }

    /// Cancels close()'s watchdog and waits until it has ended (at once: it only sleeps), so that
    /// none outlives the close.
    func closeTimerEnded() async {
        let timer = state.withLock { $0.closeTimer }
        timer?.cancel()
        await timer?.value
    }
}
