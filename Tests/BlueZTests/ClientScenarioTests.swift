import BlueZSimulator
import DBus
import Testing

@testable import BlueZ

/// The BlueZ client against the scenarios the other suites do not reach: several devices,
/// battery changes, the control point, empty notifications, bluetoothd restarting.
@Suite(.timeLimit(.minutes(1))) struct ClientScenarioTests {
    static let hr = BluetoothUUID(0x2A37)

    static func strap(_ client: BlueZClient, _ address: String) async throws -> DiscoveredDevice {
        let adapter = try await client.selectAdapter()
        let parsed = try #require(BluetoothAddress(address))
        return try #require(await client.device(parsed, on: adapter))
    }

    @Test func discoveryListsTheHeartRateStrapsNotTheBike() async throws {
        try await BlueZClientTests.withClient("two-straps") { client in
            let adapter = try await client.selectAdapter()
            var seen: [String: DiscoveredDevice] = [:]
            for await device in try await client.discover(adapter: adapter) {
                seen[device.address.description] = device
                if seen.count == 2 { break }
            }
            #expect(Set(seen.keys) == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
            #expect(seen["C0:FF:EE:00:00:01"]?.name == "HRM-Pro:123456")

            var all: Set<String> = []
            for await device in try await client.discover(adapter: adapter, services: nil) {
                all.insert(device.address.description)
                if all.count == 3 { break }
            }
            #expect(all.contains("C0:FF:EE:00:00:03"), "--all finds the bike too")
        }
    }

    @Test func batteryLevelsFollowBattery1() async throws {
        try await BlueZClientTests.withClient(
            "basic",
            // The level changes when the test says so, not at the scenario's 8 s.
            adjust: {
                $0.devices[0].known = true
                $0.events = []
            }
        ) { client, simulator in
            let strap = try await Self.strap(client, "D2:4B:7E:10:20:30")
            let levels = await client.batteryLevels(strap.path)
            _ = try await client.connect(strap.path, require: [Self.hr])
            #expect(await client.info(strap.path).battery == 87)
            await simulator.setBattery(address: "D2:4B:7E:10:20:30", percent: 55)
            var seen: [Int] = []
            for await level in levels {
                seen.append(level)
                if level == 55 { break }
            }
            #expect(seen.first == 87, "Battery1 appearing after the connection carries the level")
            #expect(seen.last == 55)
        }
    }

    @Test func controlPointWriteResetsEnergy() async throws {
        try await BlueZClientTests.withClient("uint16-energy", adjust: { $0.devices[0].known = true }) {
            client in
            let strap = try await Self.strap(client, "D2:4B:7E:10:20:31")
            _ = try await client.connect(strap.path, require: [Self.hr, BluetoothUUID(0x2A39)])
            let controlPoint = try #require(
                await client.characteristics(of: strap.path).first { $0.uuid == BluetoothUUID(0x2A39) })
            try await client.write(controlPoint, [0x01])
            await #expect(throws: BlueZError.self) { try await client.write(controlPoint, [0x02]) }
        }
    }

    @Test(arguments: [NotifyMethod.acquireNotify, .startNotify])
    func anEmptyNotificationIsDeliveredNotTakenForTheEnd(method: NotifyMethod) async throws {
        try await BlueZClientTests.withClient(
            "malformed",
            adjust: {
                $0.devices[0].known = true; $0.devices[0].heartRate.interval = 0.1
            }
        ) { client in
            let strap = try await Self.strap(client, "D2:4B:7E:10:20:33")
            _ = try await client.connect(strap.path, require: [Self.hr])
            let measurement = try #require(
                await client.characteristics(of: strap.path).first { $0.uuid == Self.hr })
            var values: [[UInt8]] = []
            for await event in try await client.notifications(measurement, using: method) {
                if case .value(let bytes) = event { values.append(bytes) }
                if values.count == 7 { break }
            }
            // The frames in turn, round and round: 16484d03, 0e4801, 16494d0301, (empty), 064a.
            let cycle: [[UInt8]] = [
                [0x16, 0x48, 0x4d, 0x03], [0x0e, 0x48, 0x01], [0x16, 0x49, 0x4d, 0x03, 0x01], [],
                [0x06, 0x4a],
            ]
            try #require(values.count == 7)
            #expect(values.contains([]))
            let start = try #require(cycle.firstIndex(of: values[0]))
            #expect(
                values == (0..<7).map { cycle[(start + $0) % cycle.count] }, "in order, on past the empty one"
            )
        }
    }

    /// 0x2A19 is readable and notifies. Reading it while subscribed makes bluetoothd announce the
    /// value read as a Value change: that is not a notification; the level changing is.
    @Test func aReadIsNotANotification() async throws {
        try await BlueZClientTests.withClient(
            "basic",
            // The level changes when the test says so, not at the scenario's 8 s.
            adjust: {
                $0.devices[0].known = true
                $0.events = []
            }
        ) { client, simulator in
            let strap = try await Self.strap(client, "D2:4B:7E:10:20:30")
            _ = try await client.connect(strap.path, require: [BluetoothUUID(0x2A19)])
            let level = try #require(
                await client.characteristics(of: strap.path).first { $0.uuid == BluetoothUUID(0x2A19) })
            let stream = try await client.notifications(level, using: .startNotify)
            for _ in 0..<3 { #expect(try await client.read(level) == [87]) }
            await simulator.setBattery(address: "D2:4B:7E:10:20:30", percent: 55)
            var values: [[UInt8]] = []
            for await event in stream {
                if case .value(let bytes) = event { values.append(bytes) }
                break
            }
            #expect(values == [[55]], "the three reads' echoes were not passed on")
        }
    }

    @Test func followsBluetoothdRestarting() async throws {
        try await BlueZClientTests.withClient(
            "power-cycle",
            adjust: { scenario in
                scenario.devices[0].known = true
                scenario.events = []
            }
        ) { client, simulator in
            #expect(!(await client.adapters().isEmpty))
            let restart = Task { await simulator.restartBluetoothd(downFor: 1.5) }
            let gone = try await client.wait("bluetoothd to go", timeout: .seconds(5)) {
                mirror -> BlueZClient.WaitOutcome<Bool> in
                mirror.paths(with: "org.bluez.Adapter1").isEmpty ? .done(true) : .pending
            }
            #expect(gone, "the objects went with bluetoothd")
            let back = try await client.wait("bluetoothd to return", timeout: .seconds(5)) {
                mirror -> BlueZClient.WaitOutcome<Bool> in
                mirror.paths(with: "org.bluez.Adapter1").isEmpty ? .pending : .done(true)
            }
            #expect(back, "loaded again from the new bluetoothd")
            #expect(try await client.selectAdapter().powered)
            await restart.value
        }
    }
}
