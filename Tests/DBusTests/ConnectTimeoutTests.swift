import DBus
import Foundation
import Logging
import Testing

/// Connects to `bus` with `timeout`; returns the error and how long it took to come.
private func failedConnect(
    to bus: HostileBus, timeout: Duration = .milliseconds(500),
    sourceLocation: SourceLocation = #_sourceLocation
) async -> (DBusError?, Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let error = await dbusError(
        { try await Connection(address: bus.address, timeout: timeout) }, sourceLocation: sourceLocation)
    return (error, clock.now - start)
}

/// Connecting to a bus that is not one: every wait ends within its timeout, a cancelled connect
/// ends at once, and a failed attempt lets go of its socket, eventfd and thread.
@Suite struct ConnectTimeoutTests {
    /// A wait of 500 ms has ended, not hung: generous, because these tests start with the whole
    /// suite, when some thirty simulators, buses, hrm and Python processes share two cores and a
    /// 500 ms timer has been seen to fire 10-12 s late. The message says which deadline fired.
    static let ended: Duration = .seconds(30)

    @Test func silentListenerTimesOut() async throws {
        let bus = try HostileBus(.silent)
        let (error, elapsed) = await failedConnect(to: bus)
        #expect(error?.code == .connectionFailed)
        #expect(error?.message == "the bus at \(bus.address) did not finish authentication within 500 ms")
        #expect(elapsed >= .milliseconds(450) && elapsed < Self.ended)
        #expect(bus.accepted == 1)
        #expect(await bus.peersClosed(expected: 1), "the client's socket is closed")
    }

    @Test func garbageAnswerFails() async throws {
        let bus = try HostileBus(.garbage)
        let (error, elapsed) = await failedConnect(to: bus)
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("authentication") == true)
        #expect(elapsed < Self.ended)
        #expect(await bus.peersClosed(expected: 1), "the client's socket is closed")
    }

    @Test func closedAtOnceFails() async throws {
        let bus = try HostileBus(.closeAtOnce)
        let (error, elapsed) = await failedConnect(to: bus, timeout: .seconds(30))
        #expect(error?.code == .connectionFailed)
        #expect(error?.message == "the bus at \(bus.address) closed the connection during authentication")
        #expect(elapsed < Self.ended)
    }

    @Test func helloNeverAnsweredTimesOut() async throws {
        let bus = try HostileBus(.authenticateThenSilent)
        let (error, elapsed) = await failedConnect(to: bus)
        #expect(error?.code == .connectionFailed)
        #expect(error?.message == "the bus at \(bus.address) did not answer Hello within 500 ms")
        #expect(elapsed < Self.ended)
        #expect(await bus.peersClosed(expected: 1), "the client's socket is closed")
    }

    @Test func closedInsteadOfHelloFails() async throws {
        let bus = try HostileBus(.authenticateThenClose)
        let (error, elapsed) = await failedConnect(to: bus, timeout: .seconds(30))
        #expect(error?.code == .connectionFailed)
        #expect(
            error?.message == "the bus at \(bus.address) closed the connection instead of answering Hello")
        #expect(elapsed < Self.ended)
    }

    /// connect(2) itself blocks (the listener's accept queue is full): the caller still gets its
    /// error at the deadline, and the thread blocked in connect(2) closes the socket as soon as
    /// connect(2) returns.
    @Test func blockedConnectTimesOut() async throws {
        let bus = try HostileBus(.fullBacklog)
        let (error, elapsed) = await failedConnect(to: bus)
        #expect(error?.code == .connectionFailed)
        #expect(error?.message == "the bus at \(bus.address) did not accept the connection within 500 ms")
        #expect(elapsed < Self.ended)
        bus.acceptNow()
        #expect(await bus.peersClosed(expected: 1), "the abandoned socket is closed once connected")
        bus.stop()
    }

    @Test func cancellingABlockedConnectEndsItAtOnce() async throws {
        let bus = try HostileBus(.fullBacklog)
        let records = CallLogTests.Records()
        let logger = Logger(label: "dbus") { _ in CallLogTests.Recorder(records: records, logLevel: .debug) }
        let task = Task { try await Connection(address: bus.address, timeout: .seconds(60), logger: logger) }
        // Cancelled once the attempt has begun (logged as its thread is about to connect).
        #expect(await eventually { records.value.withLock { $0.contains { $0.contains("connecting to") } } })
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let error = await dbusError { try await task.value }
        // Cancelled, not the 60 s timeout; the bound only proves "not hung".
        #expect(error?.code == .cancelled)
        #expect(clock.now - start < Self.ended)
        bus.acceptNow()
        #expect(await bus.peersClosed(expected: 1), "the abandoned socket is closed once connected")
        bus.stop()
    }

    /// Cancelled during authentication (a silent bus) or while Hello waits (a bus that
    /// authenticated and then says nothing): `.cancelled` at once, and the socket closed.
    @Test(arguments: [HostileBus.Behaviour.silent, .authenticateThenSilent])
    func cancellingEndsAConnectAtOnce(behaviour: HostileBus.Behaviour) async throws {
        let bus = try HostileBus(behaviour)
        let task = Task { try await Connection(address: bus.address, timeout: .seconds(60)) }
        if behaviour == .silent {
            #expect(await eventually { bus.accepted == 1 })
        } else {
            #expect(await eventually { bus.authenticated == 1 }, "Hello is on its way")
        }
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let error = await dbusError { try await task.value }
        #expect(error?.code == .cancelled)
        #expect(clock.now - start < Self.ended)
        #expect(await bus.peersClosed(expected: 1), "the client's socket is closed")
    }

    @Test func cancelledBeforeConnectingNeverConnects() async throws {
        let bus = try HostileBus(.silent)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await Connection(address: bus.address, timeout: .seconds(60))
        }
        let error = await dbusError { try await task.value }
        #expect(error?.code == .cancelled)
        // A window for a wrong connect to arrive: it can only let a bug through, never fail a
        // correct build.
        try await Task.sleep(for: .milliseconds(100))
        #expect(bus.accepted == 0)
    }

    /// Failed attempts of every kind leave no socket, eventfd or loop thread behind. The sockets
    /// are checked exactly (the hostile bus sees each one closed); other tests run meanwhile, so
    /// sockets, eventfds and loop threads of the whole process are counted generously: a leak
    /// would be one per attempt, 40 here, and the margin is 12.
    @Test func failedAttemptsLeakNothing() async throws {
        let attempts = 8
        let margin = 12
        let fdsBefore = socketsAndEventFDs()
        let loopsBefore = loopThreads()
        let silent = try HostileBus(.silent)
        let hello = try HostileBus(.authenticateThenSilent)
        let closing = try HostileBus(.closeAtOnce)
        let blocked = try HostileBus(.fullBacklog)
        for _ in 0..<attempts {
            for bus in [silent, hello, closing] {
                _ = await failedConnect(to: bus, timeout: .milliseconds(100))
            }
            let task = Task { try await Connection(address: silent.address, timeout: .seconds(60)) }
            try await Task.sleep(for: .milliseconds(20))
            task.cancel()
            _ = await dbusError { try await task.value }
            _ = await failedConnect(to: blocked, timeout: .milliseconds(50))
        }
        // The connects blocked in connect(2) go through now, and are found given up and closed.
        blocked.acceptNow()
        #expect(await blocked.peersClosed(expected: attempts))
        #expect(await silent.allPeersClosed())
        #expect(await hello.peersClosed(expected: attempts))
        for bus in [silent, hello, closing, blocked] { bus.stop() }
        #expect(
            await eventually { socketsAndEventFDs().count <= fdsBefore.count + margin },
            "sockets and eventfds: \(fdsBefore) before, \(socketsAndEventFDs()) after \(5 * attempts) attempts"
        )
        #expect(
            await eventually { loopThreads().count <= loopsBefore.count + margin },
            "loop threads: \(loopsBefore) before, \(loopThreads()) after \(5 * attempts) attempts")
    }

    @Test func realBusStillConnects() async throws {
        try await withBus { bus in
            let connection = try await Connection(address: bus.address, timeout: .seconds(30))
            #expect(connection.uniqueName.isUnique)
            #expect(await connection.canPassUnixFDs)
            let owner = try await connection.nameOwner(connection.uniqueName)
            #expect(owner == connection.uniqueName)
            await connection.close()
        }
    }
}
