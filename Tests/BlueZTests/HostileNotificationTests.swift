import BlueZSimulator
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import BlueZ

/// Notifications from a bluetoothd that misbehaves (hrm-sim's `acquireFd`, `valueType`) or reach a
/// consumer that stops taking them (stdout blocked).
@Suite(.timeLimit(.minutes(1))) struct HostileNotificationTests {
    static let strap = "D2:4B:7E:10:20:30"
    static let hr = BluetoothUUID(0x2A37)

    /// Serves `basic` with its strap known and streaming every `interval` seconds, changed by
    /// `adjust`, connects, and runs `body` with the measurement characteristic.
    static func withMeasurement(
        interval: Double = 0.05, log: String? = nil,
        adjust: @escaping (inout Scenario.Device) -> Void = { _ in },
        _ body: (BlueZClient, Characteristic) async throws -> Void
    ) async throws {
        let setUp: (inout Scenario) -> Void = { scenario in
            scenario.devices[0].known = true
            scenario.devices[0].heartRate.interval = interval
            scenario.events = []
            adjust(&scenario.devices[0])
        }
        try await BlueZClientTests.withClient("basic", adjust: setUp, log: log) { client in
            let adapter = try await client.selectAdapter()
            let address = try #require(BluetoothAddress(Self.strap))
            let device = try #require(await client.device(address, on: adapter))
            _ = try await client.connect(device.path, require: [Self.hr])
            let measurement = try #require(await client.characteristic(Self.hr, of: device.path))
            try await body(client, measurement)
            await client.releaseNotifications(measurement)
            try await client.disconnect(device.path)
        }
    }

    static func temporaryLog() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID()).jsonl").path
    }

    /// What AcquireNotify hands out, and how hrm says it.
    static let wrongDescriptors: [(kind: String, words: String)] = [
        ("pipe", "a pipe"), ("file", "a regular file"), ("devnull", "a character device"),
        ("stream", "a stream socket"),
    ]

    final class Counter: Sendable {
        private let count = Atomic(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
        func raise(to value: Int) { count.max(value, ordering: .relaxed) }
    }

    /// The first `count` events of `stream`, or those that came before it ended or `timeout`
    /// passed.
    static func collect(
        _ count: Int, from stream: AsyncStream<NotificationEvent>, within timeout: Duration = .seconds(10)
    ) async -> [NotificationEvent] {
        let collected = Collected()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in stream where collected.append(event) == count { return }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        return collected.events
    }

    final class Collected: Sendable {
        private let state = Mutex<[NotificationEvent]>([])
        var events: [NotificationEvent] { state.withLock { $0 } }
        /// Appends `event`; returns how many there are.
        func append(_ event: NotificationEvent) -> Int {
            state.withLock {
                $0.append(event)
                return $0.count
            }
        }
    }

    // MARK: - AcquireNotify handing out something else than a SEQPACKET socket

    /// The check itself, on socket pairs of every type: only SEQPACKET passes.
    @Test func whatADescriptorIs() throws {
        for (type, words) in [
            (SOCK_SEQPACKET, nil), (SOCK_STREAM, "a stream socket"), (SOCK_DGRAM, "a datagram socket"),
        ] {
            var pair: [Int32] = [-1, -1]
            try #require(socketpair(AF_UNIX, Int32(type.rawValue), 0, &pair) == 0)
            defer { for fd in pair { close(fd) } }
            #expect(DatagramReader.kind(ofNonSeqpacket: pair[0]) == words)
        }
        #expect(DatagramReader.kind(ofNonSeqpacket: -1)?.hasPrefix("a descriptor fstat refuses") == true)
    }

    /// `.automatic`: the descriptor is closed (bluetoothd's acquisition released), the stream says
    /// why it fell back, and notifications come by StartNotify: once, no loop of subscriptions.
    @Test(arguments: wrongDescriptors.map(\.kind))
    func automaticFallsBackToStartNotify(kind: String) async throws {
        let words = try #require(Self.wrongDescriptors.first { $0.kind == kind }?.words)
        let log = Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        var events: [NotificationEvent] = []
        try await Self.withMeasurement(log: log, adjust: { $0.acquireFd = kind }) { client, measurement in
            events = await Self.collect(6, from: try await client.notifications(measurement))
        }
        guard case .fellBackToStartNotify(let reason)? = events.first else {
            Issue.record("no fallback first: \(events)")
            return
        }
        #expect(reason.message == "AcquireNotify returned \(words), not a SEQPACKET socket")
        #expect(reason.code == .bluez)
        let values = events.dropFirst().compactMap { if case .value(let bytes) = $0 { bytes } else { nil } }
        #expect(values.count == 5, "notifications arrive by StartNotify: \(events)")
        #expect(values.allSatisfy { $0.count >= 2 })

        let entries = try BlueZClientTests.logEntries(log)
        #expect(entries.filter { $0 == "AcquireNotify" }.count == 1)
        #expect(entries.filter { $0 == "StartNotify" }.count == 1)
        #expect(entries.filter { $0 == "Connect" }.count == 1)
        #expect(entries.filter { $0 == "Disconnect" }.count == 1, "only the test's own, at the end")
        let start = try #require(entries.firstIndex(of: "StartNotify"))
        if kind == "pipe" || kind == "stream" {
            let released = try #require(entries.firstIndex(of: "acquire-released"))
            #expect(released < start, "the descriptor was closed before StartNotify")
        }
    }

    /// bluetoothd may not have seen the hang-up of the descriptor hrm closed when StartNotify
    /// comes: "Notify acquired" then is no reason to give up.
    @Test func theFallbackWaitsForBluetoothdToSeeTheRelease() async throws {
        let acquired = Scenario.DBusFailure(error: "org.bluez.Error.NotPermitted", message: "Notify acquired")
        var events: [NotificationEvent] = []
        try await Self.withMeasurement(
            adjust: { device in
                device.acquireFd = "pipe"
                device.callFailures = ["StartNotify": [acquired, acquired]]
            }
        ) { client, measurement in
            events = await Self.collect(3, from: try await client.notifications(measurement))
        }
        #expect(events.count == 3)
        if case .fellBackToStartNotify? = events.first {
        } else {
            Issue.record("no fallback: \(events)")
        }
        #expect(events.dropFirst().allSatisfy { if case .value = $0 { true } else { false } })
    }

    /// `.automatic` with an `inline` handler: the values go to it, the fallback to the stream.
    @Test func automaticFallsBackWithAnInlineHandler() async throws {
        let count = Counter()
        var events: [NotificationEvent] = []
        try await Self.withMeasurement(adjust: { $0.acquireFd = "pipe" }) { client, measurement in
            let stream = try await client.notifications(measurement) { _ in count.add() }
            let consumer = Task {
                var events: [NotificationEvent] = []
                for await event in stream { events.append(event) }
                return events
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while count.value < 5 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            consumer.cancel()
            events = await consumer.value
        }
        #expect(count.value >= 5)
        #expect(events.count == 1)
        if case .fellBackToStartNotify(let reason)? = events.first {
            #expect(reason.message == "AcquireNotify returned a pipe, not a SEQPACKET socket")
        } else {
            Issue.record("no fallback: \(events)")
        }
    }

    /// `.acquireNotify`: the call fails with what was handed out, after closing it.
    @Test(arguments: wrongDescriptors.map(\.kind))
    func acquireNotifyOnlyFailsWithTheReason(kind: String) async throws {
        let words = try #require(Self.wrongDescriptors.first { $0.kind == kind }?.words)
        let log = Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        try await Self.withMeasurement(log: log, adjust: { $0.acquireFd = kind }) { client, measurement in
            do throws(BlueZError) {
                _ = try await client.notifications(measurement, using: .acquireNotify)
                Issue.record("subscribed")
            } catch {
                #expect(error.message == "AcquireNotify returned \(words), not a SEQPACKET socket")
                #expect(error.code == .bluez)
            }
        }
        if kind == "pipe" || kind == "stream" {
            let entries = try BlueZClientTests.logEntries(log)
            let released = try #require(entries.firstIndex(of: "acquire-released"))
            let disconnect = try #require(entries.firstIndex(of: "Disconnect"))
            #expect(released < disconnect, "closed at once")
        }
    }

    // MARK: - A consumer that blocks (stdout full) on the StartNotify path

    /// An `inline` handler that blocks whenever `blocking` is set, until `release`.
    final class BlockingHandler: Sendable {
        let blocking = Atomic(true)
        let delivered = Atomic(0)
        let semaphore = DispatchSemaphore(value: 0)
        /// Set while the handler is blocked.
        let blocked = Atomic(false)

        func handle(_ bytes: [UInt8]) {
            delivered.add(1, ordering: .relaxed)
            guard blocking.load(ordering: .acquiring) else { return }
            blocked.store(true, ordering: .releasing)
            semaphore.wait()
            blocked.store(false, ordering: .releasing)
        }

        var isBlocked: Bool { blocked.load(ordering: .acquiring) }

        func release() {
            blocking.store(false, ordering: .releasing)
            if blocked.load(ordering: .acquiring) { semaphore.signal() }
        }
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes.
    static func eventually(
        _ timeout: Duration = .seconds(20), _ condition: () async -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return await condition()
    }

    @Test func aBlockedInlineHandlerQueuesABoundedNumberAndCountsTheRest() async throws {
        let log = Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        let handler = BlockingHandler()
        try await Self.withMeasurement(interval: 0.005, log: log) { client, measurement in
            try await Self.blockedHandler(client, measurement, handler)
        }
        let entries = try BlueZClientTests.logEntries(log)
        #expect(entries.contains("StopNotify"))
    }

    static func blockedHandler(
        _ client: BlueZClient, _ measurement: Characteristic, _ handler: BlockingHandler
    ) async throws {
        // Whatever fails below, the handler's thread is let go in the end.
        defer { handler.release() }
        let stream = try await client.notifications(measurement, using: .startNotify) {
            handler.handle($0)
        }
        let session = try #require(await client.sessions[measurement.path])
        let (reports, reported) = AsyncStream.makeStream(of: Int.self)
        let consumer = Task {
            for await event in stream {
                if case .dropped(let count) = event { reported.yield(count) }
            }
            reported.finish()
        }

        // Blocked: values go on arriving; the queue stays within its bound and drops the rest.
        let blocked = try await Self.eventually { handler.isBlocked }
        #expect(blocked)
        let largest = Counter()
        let dropping = try await Self.eventually {
            largest.raise(to: session.queued)
            return session.droppedInAll > 0
        }
        #expect(dropping, "values were dropped while the handler was blocked")
        for _ in 0..<10 {
            largest.raise(to: session.queued)
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(largest.value <= NotifySession.capacity)
        #expect(largest.value >= NotifySession.capacity / 2, "it did fill up")

        // Unblocked: the count is reported before the values that follow the gap.
        let before = handler.delivered.load(ordering: .relaxed)
        handler.release()
        let first = await Self.first(of: reports)
        #expect((first ?? 0) >= 1)
        #expect((first ?? 0) <= session.droppedInAll)
        let flowing = try await Self.eventually { handler.delivered.load(ordering: .relaxed) > before + 100 }
        #expect(flowing)

        // Blocked again, then the consumer goes (Ctrl-C): the stream ends and the notifications
        // are released without waiting for the handler.
        handler.blocking.store(true, ordering: .releasing)
        let blockedAgain = try await Self.eventually { handler.isBlocked }
        #expect(blockedAgain)
        // Should ending the stream wait for the handler, a thread of its own lets the handler go
        // (the pool's threads may all be waiting), so that the test fails instead of hanging.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 6)
            handler.release()
        }
        consumer.cancel()
        await consumer.value
        await client.releaseNotifications(measurement)
        // Released while the handler is still blocked: the release did not wait for it (the order
        // tells, not a time).
        let stillBlocked = handler.isBlocked
        #expect(stillBlocked, "the handler is still blocked")
    }

    /// The first value of `stream`, or nil if it ends or `timeout` passes first.
    static func first(of stream: AsyncStream<Int>, within timeout: Duration = .seconds(10)) async -> Int? {
        await withTaskGroup(of: Int?.self) { group in
            group.addTask {
                for await value in stream { return value }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The stream's own reader falling behind (no `inline`), by StartNotify and by AcquireNotify:
    /// the stream holds a bounded number of events and reports how many it dropped. By
    /// AcquireNotify the socket's values wait in a stream of `NotifySession.capacity` at most; those
    /// beyond are counted and said (`.dropped`) before the next value, so every notification is
    /// either read or counted.
    @Test(arguments: [NotifyMethod.startNotify, .acquireNotify])
    func aSlowStreamReaderGetsABoundedStreamAndTheCount(method: NotifyMethod) async throws {
        var values = 0
        var dropped = 0
        try await Self.withMeasurement(interval: 0.005) { client, measurement in
            let stream = try await client.notifications(measurement, using: method)
            // What the client dropped so far, where each method counts it.
            let droppedInAll: @Sendable () -> Int
            if method == .acquireNotify {
                let acquired = await client.acquired[measurement.path]
                let drops = try #require(acquired?.drops)
                droppedInAll = { drops.inAll }
            } else {
                let session = try #require(await client.sessions[measurement.path])
                droppedInAll = { session.droppedInAll }
            }
            var iterator = stream.makeAsyncIterator()
            // Not reading for a while: more than the stream (and StartNotify's queue) hold arrive.
            #expect(try await Self.eventually { droppedInAll() > 0 })
            while values + dropped < 2 * NotifySession.capacity, let event = await iterator.next() {
                switch event {
                case .value: values += 1
                case .dropped(let count): dropped += count
                default: break
                }
            }
            if method == .acquireNotify {
                #expect(values >= NotifySession.capacity, "the stream's room was read first")
                #expect(dropped <= droppedInAll())
            }
        }
        #expect(dropped >= 1)
        #expect(values >= 1)
    }

    // MARK: - A Value of the wrong D-Bus type

    @Test(arguments: [("s", "s"), ("ai", "ai")])
    func aValueOfTheWrongTypeIsDeliveredAsSuch(valueType: String, signature: String) async throws {
        let inline = Counter()
        var malformed: [NotificationEvent] = []
        try await Self.withMeasurement(adjust: { $0.valueType = valueType }) { client, measurement in
            // Offered AcquireNotify would carry the values by socket: StartNotify it is.
            let stream = try await client.notifications(measurement, using: .startNotify) { _ in
                inline.add()
            }
            malformed = await Self.collect(3, from: stream)
        }
        #expect(inline.value == 0, "nothing reached the handler as bytes")
        #expect(malformed.count == 3)
        for event in malformed {
            guard case .wrongValueType(let got, let value) = event else {
                Issue.record("\(event)")
                continue
            }
            #expect(got == signature)
            #expect(!value.isEmpty && value.count <= 67)
        }
    }
}
