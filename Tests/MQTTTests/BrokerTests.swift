import BrokerSupport
import Foundation
import MQTT
import Testing

/// The client against a real mosquitto of the test's own, checked by mosquitto's own clients.
@Suite struct BrokerTests {
    /// What mosquitto_sub printed, without the readiness probes.
    private func payloadLines(_ subscriber: Subscriber, without probe: String) -> [String] {
        subscriber.lines.filter { !$0.hasPrefix(probe) }
    }

    @Test func publishReachesAnIndependentSubscriber() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            let client = try MQTTClient(broker.url(), options: quickOptions())
            // Published before connect(): waits in the outbox.
            client.publish(MQTTMessage(topic: "hrm/early", text: "before connect", retain: true))
            try await client.connect()
            try await client.connect()  // already connected: returns at once
            let subscriber = try broker.subscriber(topics: ["hrm/#"])
            #expect(
                await subscriber.waitUntilSubscribed(
                    client, probe: MQTTMessage(topic: "hrm/probe", text: "p")))

            let binary: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A, 0x0D, 0x20, 0x25]
            client.publish(MQTTMessage(topic: "hrm/a", payload: binary))
            client.publish(MQTTMessage(topic: "hrm/b", text: #"{"bpm":72}"#, qos: .atMostOnce))
            client.publish(MQTTMessage(topic: "hrm/status", text: "online", retain: true))
            client.publish(MQTTMessage(topic: "hrm/c", text: "größer als 0 ♥"))
            #expect(await eventually { client.outboxCount == 0 })
            #expect(await subscriber.wait { $0.contains { $0.hasPrefix("hrm/c ") } })
            // Topic, retain flag (0: a live delivery), QoS, payload in hex: exact bytes, in order.
            #expect(
                payloadLines(subscriber, without: "hrm/probe") == [
                    "hrm/early 1 1 \(hex("before connect"))", "hrm/a 0 1 \(hex(binary))",
                    "hrm/b 0 0 \(hex(#"{"bpm":72}"#))", "hrm/status 0 1 \(hex("online"))",
                    "hrm/c 0 1 \(hex("größer als 0 ♥"))",
                ])
            // Retained: a subscriber that comes later gets them, flagged retained.
            #expect(try await broker.retained("hrm/status") == ["hrm/status 1 online"])
            #expect(try await broker.retained("hrm/early") == ["hrm/early 1 before connect"])
            await client.close(within: .seconds(2))
        }
    }

    /// With a read delay as well (MQTTSink's): the messages and the broker's going wait at most
    /// that long to be read.
    @Test(arguments: [Duration.zero, .milliseconds(300)])
    func subscriptionReceivesAndSurvivesABrokerRestart(readDelay: Duration) async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            try await broker.publish("in/kept", "retained before", retain: true)
            var options = quickOptions()
            options.readDelay = readDelay
            let client = try MQTTClient(broker.url(), options: options)
            let log = EventLog(client)
            client.subscribe("in/#")
            try await client.connect()
            #expect(
                await log.wait {
                    $0.messages.contains(MQTTMessage(topic: "in/kept", text: "retained before", retain: true))
                })

            /// mosquitto_pub until the client got it (the subscription may still be on its way).
            func sendUntilReceived(_ text: String) async throws -> Bool {
                let clock = ContinuousClock()
                let end = clock.now + Patience.long
                while clock.now < end {
                    try await broker.publish("in/x", text)
                    if await log.wait(
                        within: .milliseconds(500),
                        until: { $0.messages.contains { $0.payload == Array(text.utf8) } })
                    {
                        return true
                    }
                }
                return false
            }
            #expect(try await sendUntilReceived("first"))
            #expect(
                log.messages.contains(
                    MQTTMessage(topic: "in/x", text: "first", qos: .atLeastOnce, retain: false)))

            await broker.stop()
            #expect(await log.wait { $0.disconnections == 1 })
            try await broker.start()
            #expect(await log.wait { $0.count(of: .connected) == 2 })
            #expect(try await sendUntilReceived("second"), "subscribed again after the reconnect")

            await client.close(within: .seconds(2))
            #expect(await log.wait { $0.isFinished })
            #expect(log.disconnections == 1, "close() is not a disconnection event")
        }
    }

    @Test func badCredentialsAreRefusedFast() async throws {
        guard requireTools(Tools.brokerMissing),
            requireTools(Tools.missing([Tools.passwd], names: ["mosquitto_passwd"]))
        else {
            return
        }
        let password = "pä ss:@/"
        try await withBroker(users: ["hrm": password]) { broker in
            for url in [try broker.url(user: "hrm", password: "guess-1234"), try broker.url()] {
                let client = try MQTTClient(url, options: quickOptions())
                let clock = ContinuousClock()
                let start = clock.now
                let error = await connectError(client)
                // Not .timeout (60 s): the broker's answer ended it.
                #expect(clock.now - start < Patience.long)
                #expect(error?.code == .refused)
                #expect(error?.code.rawValue == "mqtt_refused")
                #expect(
                    error?.message.contains("the broker at 127.0.0.1:\(broker.port)") == true,
                    "\(String(describing: error))")
                #expect(error?.message.contains("guess-1234") == false, "the password is not shown")
                await client.close(within: .seconds(1))
            }
            // The right password, percent-encoded in the URL.
            let url = try MQTTBrokerURL(
                parsing: "mqtt://hrm:p%C3%A4%20ss%3A%40%2F@127.0.0.1:\(broker.port)")
            #expect(url.password == password)
            let client = try MQTTClient(url, options: quickOptions())
            try await client.connect()
            await client.close(within: .seconds(1))
        }
    }

    @Test(arguments: ["mqtt", "mqtts"])
    func nothingListeningIsUnreachable(scheme: String) async throws {
        let port = try freePort()
        let client = try MQTTClient(
            MQTTBrokerURL(parsing: "\(scheme)://127.0.0.1:\(port)"), options: quickOptions())
        let log = EventLog(client)
        let clock = ContinuousClock()
        let start = clock.now
        let error = await connectError(client)
        // Not .timeout (60 s): the refusal ended it.
        #expect(clock.now - start < Patience.long)
        #expect(error?.code == .unreachable)
        // Plain TCP has the exact errno; during a TLS handshake libmosquitto hides it.
        #expect(
            error?.message
                == (scheme == "mqtt"
                    ? "nothing is listening at 127.0.0.1:\(port) (connection refused)"
                    : "cannot connect to the broker at 127.0.0.1:\(port) (connection refused or no route)"))
        // A failed first connection does not keep trying. (A window for a retry to show: it can
        // only let a bug through on a slow machine, never fail a correct build.)
        try await Task.sleep(for: .milliseconds(200))
        #expect(log.all.isEmpty)
        await client.close(within: .seconds(1))
        #expect(await log.wait { $0.isFinished })
    }

    @Test(arguments: ["mqtt", "mqtts"])
    func blackHoleTimesOut(scheme: String) async throws {
        let hole = try BlackHole()
        var options = quickOptions()
        options.connectTimeout = .milliseconds(500)
        let client = try MQTTClient(
            MQTTBrokerURL(parsing: "\(scheme)://127.0.0.1:\(hole.port)"), options: options)
        let clock = ContinuousClock()
        let start = clock.now
        let error = await connectError(client)
        let elapsed = clock.now - start
        #expect(error?.code == .timeout)
        #expect(
            error?.message
                == "the broker at 127.0.0.1:\(hole.port) did not accept the connection within 500 ms")
        #expect(elapsed >= .milliseconds(450))
        #expect(elapsed < Patience.long)
        await client.close(within: .seconds(1))
        withExtendedLifetime(hole) {}
    }

    /// Cancelling the task in connect() ends the wait at once, whatever the timeout.
    @Test func cancelledConnectEndsAtOnce() async throws {
        let hole = try BlackHole()
        var options = quickOptions()
        options.connectTimeout = .seconds(60)
        let client = try MQTTClient(MQTTBrokerURL(parsing: "mqtt://127.0.0.1:\(hole.port)"), options: options)
        let attempt = Task { await connectError(client) }
        // Cancelled while it waits for the broker's answer: once its TCP connection is in.
        #expect(await eventually { hole.hasPendingConnection })
        let clock = ContinuousClock()
        let start = clock.now
        attempt.cancel()
        let error = await attempt.value
        #expect(clock.now - start < Patience.long)
        #expect(error?.code == .failed)
        #expect(error?.message == "the connection attempt was cancelled")
        await client.close(within: .seconds(1))
        withExtendedLifetime(hole) {}
    }

    /// A client that goes away without close() (here: dropped, its socket closed without
    /// DISCONNECT, as the kernel does when a process dies): the broker publishes its will.
    @Test func willIsPublishedWhenTheClientGoesAwayWithoutClose() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            let subscriber = try broker.subscriber(topics: ["hrm/status"], format: "%t %p")
            var options = quickOptions()
            options.will = MQTTMessage(topic: "hrm/status", text: "offline", retain: true)
            var client: MQTTClient? = try MQTTClient(broker.url(), options: options)
            try await client?.connect()
            client?.publish(MQTTMessage(topic: "hrm/status", text: "online", retain: true))
            #expect(await subscriber.wait { $0.contains("hrm/status online") })
            client = nil
            #expect(await subscriber.wait { $0.last == "hrm/status offline" })
            #expect(try await broker.retained("hrm/status") == ["hrm/status 1 offline"])
        }
    }

    @Test func closePublishesTheLastMessagesAndNoWill() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            let subscriber = try broker.subscriber(topics: ["hrm/#"], format: "%t %r %p")
            var options = quickOptions()
            options.will = MQTTMessage(topic: "hrm/status", text: "offline", retain: true)
            let client = try MQTTClient(broker.url(), options: options)
            let log = EventLog(client)
            try await client.connect()
            #expect(
                await subscriber.waitUntilSubscribed(
                    client, probe: MQTTMessage(topic: "hrm/probe", text: "p")))
            for number in 1...50 { client.publish(MQTTMessage(topic: "hrm/n", text: "\(number)")) }
            await client.close(
                last: [
                    MQTTMessage(topic: "hrm/bpm", text: "", retain: true),
                    MQTTMessage(topic: "hrm/status", text: "bye", retain: true),
                ], within: .seconds(5))
            #expect(client.outboxCount == 0)
            #expect(await log.wait { $0.isFinished })
            await client.close(within: .seconds(5))  // idempotent
            client.publish(MQTTMessage(topic: "hrm/n", text: "after close"))
            #expect(client.outboxCount == 0, "ignored after close")

            #expect(await subscriber.wait { $0.last == "hrm/status 0 bye" })
            #expect(
                payloadLines(subscriber, without: "hrm/probe")
                    == (1...50).map { "hrm/n 0 \($0)" } + ["hrm/bpm 0 ", "hrm/status 0 bye"])
            // A window for a wrong will to arrive (it can only let a bug through, never fail a
            // correct build).
            try await Task.sleep(for: .milliseconds(300))
            #expect(!subscriber.lines.contains { $0.hasSuffix("offline") }, "no will after DISCONNECT")
            #expect(try await broker.retained("hrm/status") == ["hrm/status 1 bye"])
        }
    }

    /// publish(contentsOf:) hands its messages over together (one wake-up, written corked):
    /// each arrives, with its own QoS and retain flag, in order among single publishes, and a
    /// retained one in a batch replaces the waiting retained one of its topic as a single publish
    /// would.
    @Test func aBatchArrivesInOrderAmongSinglePublishes() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            let subscriber = try broker.subscriber(topics: ["hrm/#"], format: "%t %r %q %p")
            let client = try MQTTClient(broker.url(), options: quickOptions())
            try await client.connect()
            #expect(
                await subscriber.waitUntilSubscribed(
                    client, probe: MQTTMessage(topic: "hrm/probe", text: "p")))
            for number in 1...20 {
                client.publish(MQTTMessage(topic: "hrm/single", text: "\(number)"))
                client.publish(contentsOf: [
                    MQTTMessage(topic: "hrm/measurement", text: "m\(number)"),
                    MQTTMessage(topic: "hrm/bpm", text: "b\(number)", qos: .atMostOnce, retain: true),
                ])
            }
            client.publish(contentsOf: [])
            client.publish(contentsOf: [MQTTMessage(topic: "hrm/last", text: "end")])
            #expect(await eventually { client.outboxCount == 0 })
            #expect(await subscriber.wait { $0.last == "hrm/last 0 1 end" })
            let expected =
                (1...20).flatMap {
                    ["hrm/single 0 1 \($0)", "hrm/measurement 0 1 m\($0)", "hrm/bpm 0 0 b\($0)"]
                } + ["hrm/last 0 1 end"]
            let got = payloadLines(subscriber, without: "hrm/probe")
            // A retained bpm still waiting when the next comes is replaced (the outbox keeps a
            // topic's latest retained value): bpm lines may be missing, never out of place.
            let arrived = Set(got)
            #expect(expected.filter { arrived.contains($0) } == got, "in order, nothing else")
            #expect(expected.filter { !$0.hasPrefix("hrm/bpm") && !arrived.contains($0) } == [], "none lost")
            #expect(arrived.contains("hrm/bpm 0 0 b20"))
            #expect(try await broker.retained("hrm/bpm") == ["hrm/bpm 1 b20"])
            await client.close(within: .seconds(2))
        }
    }

    /// In the middle of a stream of numbered QoS 1 messages the broker hangs (so that what the
    /// client sent meanwhile is in flight, unacknowledged), stops, and comes back a second later
    /// on the same port: the subscriber (a persistent session, on a broker that persists it) gets
    /// every number, in order; repeats from the resending are allowed, gaps are not.
    /// With MQTTSink's read delay as well: the acknowledgements wait, what is in flight does not
    /// change.
    @Test(arguments: [Duration.zero, .seconds(1)])
    func brokerRestartMidStreamLosesNothing(readDelay: Duration) async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker(persistence: true) { broker in
            let subscriber = try broker.subscriber(
                topics: ["seq/#"], format: "%t %p",
                extra: ["-c", "-i", "witness-\(UUID().uuidString.prefix(8))"])
            var options = quickOptions()
            options.readDelay = readDelay
            let client = try MQTTClient(broker.url(), options: options)
            let log = EventLog(client)
            try await client.connect()
            #expect(
                await subscriber.waitUntilSubscribed(
                    client, probe: MQTTMessage(topic: "seq/probe", text: "p")))

            // The broker's troubles come at set numbers, not times: a loaded machine slows the
            // publisher down, and what is asserted is about messages. 10 ms apart: the broker hangs
            // from 40 to 80, is away from 80 to 180 (about a second).
            let count = 250
            var stopping: Task<Void, Never>? = nil
            var waitingWhenHung = 0
            for number in 1...count {
                client.publish(MQTTMessage(topic: "seq/n", text: "\(number)"))
                if number == 40 { broker.freeze() }
                if number == 80 {
                    waitingWhenHung = client.outboxCount
                    stopping = Task { await broker.stop() }
                }
                if number == 180 {
                    await stopping?.value
                    try await broker.start()
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(waitingWhenHung >= 40, "sent but not acknowledged while the broker hung")

            #expect(await eventually { client.outboxCount == 0 })
            #expect(await subscriber.wait { $0.contains("seq/n \(count)") })
            var seen = Set<Int>()
            let firsts = received(subscriber).filter { seen.insert($0).inserted }
            #expect(firsts == Array(1...count), "missing: \(Set(1...count).subtracting(seen).sorted())")
            #expect(log.disconnections == 1)
            #expect(log.count(of: .connected) == 2)
            await client.close(within: .seconds(2))
        }
    }

    /// With a read delay the broker's acknowledgements wait for the next hand-over, or the delay
    /// when none comes: the outbox empties all the same, with nothing published after, and
    /// close() drains what is in flight at once.
    @Test func acknowledgementsWaitAtMostTheReadDelay() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            let subscriber = try broker.subscriber(topics: ["hrm/#"], format: "%t %p")
            var options = quickOptions()
            options.readDelay = .milliseconds(300)
            let client = try MQTTClient(broker.url(), options: options)
            try await client.connect()
            #expect(
                await subscriber.waitUntilSubscribed(
                    client, probe: MQTTMessage(topic: "hrm/probe", text: "p")))
            for number in 1...10 { client.publish(MQTTMessage(topic: "hrm/n", text: "\(number)")) }
            #expect(await eventually { client.outboxCount == 0 }, "read at the delay, unprompted")
            for number in 11...15 { client.publish(MQTTMessage(topic: "hrm/n", text: "\(number)")) }
            await client.close(within: .seconds(5))
            #expect(client.outboxCount == 0)
            #expect(await subscriber.wait { $0.last == "hrm/n 15" })
            #expect(payloadLines(subscriber, without: "hrm/probe") == (1...15).map { "hrm/n \($0)" })
        }
    }

    /// The numbers the witness got, in the order it got them.
    private func received(_ subscriber: Subscriber) -> [Int] {
        subscriber.lines.compactMap { $0.hasPrefix("seq/n ") ? Int($0.dropFirst(6)) : nil }
    }

    @Test func overflowWhileTheBrokerIsAwayDropsTheOldest() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            var options = quickOptions()
            options.outboxCapacity = 10
            let client = try MQTTClient(broker.url(), options: options)
            let log = EventLog(client)
            try await client.connect()
            await broker.stop()
            #expect(await log.wait { $0.disconnections == 1 })

            for number in 1...25 {
                client.publish(MQTTMessage(topic: "keep/\(number)", text: "\(number)", retain: true))
            }
            #expect(client.outboxCount == 10)
            #expect(await log.wait { $0.dropped == 15 })

            try await broker.start()
            #expect(await eventually { client.outboxCount == 0 })
            // Retained, one topic each: what reached the broker, whoever asks.
            let kept = try await broker.retained("keep/#", count: 10)
            #expect(Set(kept) == Set((16...25).map { "keep/\($0) 1 \($0)" }))
            #expect(log.dropped == 15)
            await client.close(within: .seconds(2))
        }
    }

    @Test func closeBeforeConnect() async throws {
        let client = try MQTTClient(MQTTBrokerURL(parsing: "mqtt://127.0.0.1:1"), options: quickOptions())
        let log = EventLog(client)
        client.publish(MQTTMessage(topic: "a", text: "b"))
        await client.close(last: [MQTTMessage(topic: "a", text: "last")], within: .seconds(1))
        #expect(await log.wait { $0.isFinished })
        let error = await connectError(client)
        #expect(error?.code == .failed)
        #expect(error?.message == "the client is closed")
    }

    @Test func invalidWillTopicIsRefusedAtOnce() throws {
        var options = quickOptions()
        options.will = MQTTMessage(topic: "hrm/+/status", text: "offline")
        #expect(throws: MQTTError.self) {
            _ = try MQTTClient(MQTTBrokerURL(parsing: "mqtt://127.0.0.1"), options: options)
        }
    }
}
