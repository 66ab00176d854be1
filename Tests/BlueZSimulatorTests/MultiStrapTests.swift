import BlueZSimulator
import DBus
import Foundation
import Testing

/// Several straps on one adapter: the link cap (`maxConnections`), concurrent and repeated
/// Connect() calls (`concurrentConnects`, `connectDelay`), and straps streaming side by side.
@Suite(.timeLimit(.minutes(1))) struct MultiStrapTests {
    typealias Rig = SimulatorBehaviourTests.Rig
    static let device1: InterfaceName = "org.bluez.Device1"
    static let characteristic: InterfaceName = "org.bluez.GattCharacteristic1"
    static let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"

    static func path(_ address: String) -> ObjectPath {
        (try? ObjectPath("/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_"))) ?? "/"
    }

    /// A rig serving the shipped scenario `name` with every strap known (no discovery needed),
    /// notifications every 0.1 s unless `adjust` says otherwise.
    static func withRig(
        _ name: String, adjust: @escaping (inout Scenario) -> Void = { _ in },
        _ body: (Rig) async throws -> Void
    ) async throws {
        try await SimulatorBehaviourTests.withRig(
            scenario: name,
            adjust: { scenario in
                for i in scenario.devices.indices { scenario.devices[i].known = true }
                adjust(&scenario)
            }, body)
    }

    /// The D-Bus error a call failed with (nil when it succeeded).
    static func failure(_ body: () async throws(DBusError) -> Message) async -> DBusError? {
        await HostileGATTTests.failure(body)
    }

    static func connect(_ rig: Rig, _ address: String) async -> DBusError? {
        await failure { () async throws(DBusError) -> Message in
            try await rig.call(path(address), device1, "Connect")
        }
    }

    static func disconnect(_ rig: Rig, _ address: String) async throws {
        _ = try await rig.call(path(address), device1, "Disconnect")
    }

    /// Waits (without blocking a thread) until the simulator has the strap's Connect() pending.
    static func untilPending(_ rig: Rig, _ address: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await !rig.simulator.connectPending(address: address) {
            try #require(ContinuousClock.now < deadline, "\(address)'s Connect became pending")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The strap's Heart Rate Measurement characteristic, once its GATT objects are exported.
    static func measurement(_ rig: Rig, _ address: String) async throws -> ObjectPath {
        let device = path(address)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let objects = try await rig.client.managedObjects(destination: "org.bluez")
            if let found = objects.first(where: { path, interfaces in
                path.isDescendant(of: device)
                    && interfaces[characteristic.rawValue]?["UUID"] == .string(heartRateMeasurement)
            }) {
                return found.key
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw DBusError(name: "org.hrm.Test.Timeout", message: "no 0x2A37 under \(device)")
    }

    /// Connects every strap (all at once), then StartNotify on each one's 0x2A37; returns the
    /// characteristics by address.
    static func connectAndSubscribe(_ rig: Rig, _ addresses: [String]) async throws -> [String: ObjectPath] {
        let failures = await withTaskGroup(of: DBusError?.self) { group in
            for address in addresses { group.addTask { await connect(rig, address) } }
            return await group.reduce(into: [DBusError]()) { if let error = $1 { $0.append(error) } }
        }
        try #require(failures.isEmpty, "every Connect succeeded: \(failures)")
        var characteristics: [String: ObjectPath] = [:]
        for address in addresses {
            let path = try await measurement(rig, address)
            _ = try await rig.call(path, characteristic, "StartNotify")
            characteristics[address] = path
        }
        return characteristics
    }

    /// Counts the notifications (PropertiesChanged Value) of each characteristic until `enough`
    /// says so of the counts and the devices whose Connected went false meanwhile (events, not a
    /// window of wall time a loaded machine stretches; the 30 s deadline only proves "not hung").
    static func count(
        _ rig: Rig, _ characteristics: [String: ObjectPath],
        until enough: (_ counts: [String: Int], _ dropped: Set<String>) -> Bool,
        during action: () async -> Void = {}
    ) async throws -> (counts: [String: Int], dropped: Set<String>, afterDrop: [String: Int]) {
        let events = try await rig.client.objectEvents(sender: "org.bluez", pathNamespace: "/org/bluez")
        var iterator = events.makeAsyncIterator()
        let byPath = Dictionary(uniqueKeysWithValues: characteristics.map { ($0.value, $0.key) })
        let devices = Dictionary(uniqueKeysWithValues: characteristics.keys.map { (path($0), $0) })
        var counts = characteristics.mapValues { _ in 0 }
        var dropped: Set<String> = []
        // Values that came after their strap's `Connected: false` (the ones queued before it, sent
        // before the drop, are counted in `counts` only).
        var afterDrop: [String: Int] = [:]
        await action()
        let end = ContinuousClock.now + .seconds(30)
        while !enough(counts, dropped), ContinuousClock.now < end, let event = await iterator.next()?.element
        {
            guard case .propertiesChanged(let change) = event else { continue }
            if let address = byPath[change.path], change.changed["Value"] != nil {
                counts[address, default: 0] += 1
                if dropped.contains(address) { afterDrop[address, default: 0] += 1 }
            }
            if let address = devices[change.path], change.changed["Connected"] == .boolean(false) {
                dropped.insert(address)
            }
        }
        return (counts, dropped, afterDrop)
    }

    // MARK: - The link cap

    static let capped = ["C0:FF:EE:00:04:01", "C0:FF:EE:00:04:02", "C0:FF:EE:00:04:03"]

    /// maxConnections 2: the third Connect fails as bluetoothd 5.66 fails a link the controller
    /// refuses; once a link is freed (a Disconnect, a drop) a Connect succeeds again.
    @Test func linkCapRefusesAThirdLinkUntilOneIsFreed() async throws {
        try await Self.withRig("link-cap") { rig in
            let (one, two, three) = (Self.capped[0], Self.capped[1], Self.capped[2])
            #expect(await Self.connect(rig, one) == nil)
            #expect(await Self.connect(rig, two) == nil)
            let refused = await Self.connect(rig, three)
            #expect(refused?.name.rawValue == "org.bluez.Error.Failed")
            #expect(refused?.message == "le-connection-abort-by-local")
            let connected = try await rig.client.getProperty(
                "Connected", interface: Self.device1, path: Self.path(three), destination: "org.bluez")
            #expect(connected == .boolean(false), "a refused link never shows Connected")

            // A Disconnect frees a link.
            try await Self.disconnect(rig, one)
            #expect(await Self.connect(rig, three) == nil)
            #expect(await Self.connect(rig, one)?.message == "le-connection-abort-by-local")

            // So does a drop; the strap that dropped meets the cap when it comes back.
            await rig.simulator.dropLink(address: two, for: 0.3)
            #expect(await Self.connect(rig, one) == nil)
            #expect(await Self.connect(rig, two)?.message == "le-connection-abort-by-local")
        }
    }

    // MARK: - Concurrent and repeated Connect() calls

    static let busy = ["C0:FF:EE:00:05:01", "C0:FF:EE:00:05:02", "C0:FF:EE:00:05:03"]

    /// concurrentConnects refuse: a Connect while another strap's is pending fails at once with
    /// InProgress; issued one after the other, all succeed.
    @Test func refusedConcurrentConnectAndSerialisedOnes() async throws {
        try await Self.withRig("busy-connects") { rig in
            // The first strap's Connect stays pending until the refusal has come.
            await rig.simulator.holdConnects(address: Self.busy[0])
            async let first = Self.connect(rig, Self.busy[0])
            try await Self.untilPending(rig, Self.busy[0])
            let refused = await Self.connect(rig, Self.busy[1])
            #expect(refused?.name.rawValue == "org.bluez.Error.InProgress")
            #expect(refused?.message == "In Progress")
            await rig.simulator.holdConnects(address: Self.busy[0], false)
            #expect(await first == nil)
            // One at a time: no error.
            #expect(await Self.connect(rig, Self.busy[1]) == nil)
            #expect(await Self.connect(rig, Self.busy[2]) == nil)
        }
    }

    /// The default (`allow`, as bluetoothd 5.66 on kernel 6.1 in the lab): both succeed.
    @Test func concurrentConnectsAllowedByDefault() async throws {
        try await Self.withRig(
            "busy-connects",
            adjust: { scenario in
                scenario.adapters[0].concurrentConnects = "allow"
            }
        ) { rig in
            await rig.simulator.holdConnects(address: Self.busy[0])
            async let first = Self.connect(rig, Self.busy[0])
            try await Self.untilPending(rig, Self.busy[0])
            #expect(await Self.connect(rig, Self.busy[1]) == nil, "the second connected meanwhile")
            await rig.simulator.holdConnects(address: Self.busy[0], false)
            #expect(await first == nil)
        }
    }

    /// A second Connect of the same strap while its first is pending: Failed, "Operation already
    /// in progress" (5.66, confirmed in the lab), in any concurrentConnects mode; once connected,
    /// Connect returns at once.
    @Test(arguments: ["allow", "refuse"])
    func sameStrapSecondConnectWhilePending(mode: String) async throws {
        try await Self.withRig(
            "busy-connects",
            adjust: { scenario in
                scenario.adapters[0].concurrentConnects = mode
            }
        ) { rig in
            let strap = Self.busy[0]
            await rig.simulator.holdConnects(address: strap)
            async let first = Self.connect(rig, strap)
            try await Self.untilPending(rig, strap)
            let again = await Self.connect(rig, strap)
            #expect(again?.name.rawValue == "org.bluez.Error.Failed")
            #expect(again?.message == "Operation already in progress")
            await rig.simulator.holdConnects(address: strap, false)
            #expect(await first == nil)
            #expect(await Self.connect(rig, strap) == nil, "connected: returns at once")
        }
    }

    /// A Disconnect ends a pending Connect: it fails with `br-connection-canceled` (5.66,
    /// confirmed in the lab) and the strap stays disconnected.
    @Test func disconnectCancelsAPendingConnect() async throws {
        try await Self.withRig("busy-connects") { rig in
            let strap = Self.busy[2]
            await rig.simulator.holdConnects(address: strap)
            async let pending = Self.connect(rig, strap)
            try await Self.untilPending(rig, strap)
            try await Self.disconnect(rig, strap)
            await rig.simulator.holdConnects(address: strap, false)
            let cancelled = await pending
            #expect(cancelled?.name.rawValue == "org.bluez.Error.Failed")
            #expect(cancelled?.message == "br-connection-canceled")
            let connected = try await rig.client.getProperty(
                "Connected", interface: Self.device1, path: Self.path(strap), destination: "org.bluez")
            #expect(connected == .boolean(false))
            #expect(await Self.connect(rig, strap) == nil, "the next Connect works")
        }
    }

    // MARK: - Straps streaming side by side

    static let three = ["C0:FF:EE:00:03:01", "C0:FF:EE:00:03:02", "C0:FF:EE:00:03:03"]

    /// Three straps stream at once, each on its own timer; one's drop does not stop the others,
    /// and it streams again after its reconnect.
    @Test func threeStrapsStreamAndOnesDropLeavesTheOthers() async throws {
        try await Self.withRig("three-straps", adjust: { $0.devices[2].drops = [] }) { rig in
            let characteristics = try await Self.connectAndSubscribe(rig, Self.three)
            let flaky = Self.three[2]
            let others = Array(Self.three.prefix(2))
            // Until the drop is seen and each of the others has sent 5 more.
            let outage = try await Self.count(
                rig, characteristics,
                until: { counts, dropped in
                    dropped.contains(flaky) && others.allSatisfy { (counts[$0] ?? 0) >= 5 }
                }
            ) {
                await rig.simulator.dropLink(address: flaky, for: 1.2)
            }
            #expect(outage.dropped == [flaky])
            for strap in others {
                #expect((outage.counts[strap] ?? 0) >= 5, "\(strap) streamed on: \(outage.counts)")
            }
            // Its link is down until the Connect below: nothing from it after its drop (what it
            // sent before, still queued when the drop was asked for, may come first: a loaded
            // machine can queue more than one).
            #expect(
                outage.afterDrop[flaky] == nil,
                "the dropped strap was silent: \(outage.afterDrop) of \(outage.counts)")

            // Connect waits for the strap to come back; the notify sessions come back with it.
            #expect(await Self.connect(rig, flaky) == nil)
            let after = try await Self.count(
                rig, characteristics, until: { counts, _ in Self.three.allSatisfy { (counts[$0] ?? 0) >= 4 } }
            )
            for strap in Self.three {
                #expect((after.counts[strap] ?? 0) >= 4, "\(strap) streams: \(after.counts)")
            }
        }
    }

    /// A drop with `every` comes again and again; only that strap loses its link.
    @Test func periodicDropsComeBack() async throws {
        try await Self.withRig(
            "three-straps",
            adjust: { scenario in
                var drop = Scenario.Drop(at: 0.4, for: 0.3)
                drop.every = 0.9
                scenario.devices[2].drops = [drop]
            }
        ) { rig in
            let events = try await rig.client.objectEvents(sender: "org.bluez", pathNamespace: "/org/bluez")
            var iterator = events.makeAsyncIterator()
            for strap in Self.three { #expect(await Self.connect(rig, strap) == nil) }
            var drops = 0
            while drops < 2 {
                let dropped = await SimulatorBehaviourTests.next(&iterator) { event in
                    Self.three.contains {
                        SimulatorBehaviourTests.changed(event, Self.path($0), "Connected") == .boolean(false)
                    }
                }
                guard case .propertiesChanged(let change)? = dropped.found else {
                    Issue.record("no drop \(drops + 1)")
                    return
                }
                #expect(change.path == Self.path(Self.three[2]), "only the flaky strap drops")
                drops += 1
                // Connect() waits while the strap is away, then succeeds.
                #expect(await Self.connect(rig, Self.three[2]) == nil)
            }
        }
    }

    /// The crowd: 20 straps notifying 4 times a second each, all at once: counted until every one
    /// has sent 8, none has sent more than a second's worth beyond the slowest (each its own
    /// timer, none starved; compared with each other, not with wall time).
    @Test func crowdOfTwentyAtFourHertz() async throws {
        try await Self.withRig(
            "crowd",
            adjust: { scenario in
                for i in scenario.devices.indices { scenario.devices[i].heartRate.interval = 0.25 }
            }
        ) { rig in
            let scenario = try ScenarioCatalog.load("crowd")
            let addresses = scenario.devices.map(\.address)
            #expect(addresses.count == 20)
            #expect(scenario.devices.allSatisfy { $0.heartRate.interval == 0.25 })
            #expect(scenario.adapters.first?.maxConnections == nil)
            let characteristics = try await Self.connectAndSubscribe(rig, addresses)
            let window = try await Self.count(
                rig, characteristics, until: { counts, _ in addresses.allSatisfy { (counts[$0] ?? 0) >= 8 } })
            #expect(window.dropped.isEmpty)
            for address in addresses {
                #expect((8...12).contains(window.counts[address] ?? 0), "\(address): \(window.counts)")
            }
        }
    }
}
