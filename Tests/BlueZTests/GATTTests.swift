import BlueZSimulator
import Foundation
import HeartRate
import Testing

@testable import BlueZ

@Suite(.timeLimit(.minutes(1))) struct GATTTests {
    static let hr = BluetoothUUID(0x2A37)
    static let location = BluetoothUUID(0x2A38)

    static func known(_ scenario: inout Scenario) {
        for i in scenario.devices.indices {
            scenario.devices[i].known = true
            scenario.devices[i].heartRate.interval = 0.1
        }
    }

    @Test func connectReadNotifyDisconnect() async throws {
        try await BlueZClientTests.withClient("basic", adjust: Self.known) { client in
            let adapter = try await client.selectAdapter()
            let strap = try #require(await client.device(BluetoothAddress("D2:4B:7E:10:20:30")!, on: adapter))
            let ours = try await client.connect(strap.path, require: [Self.hr, Self.location])
            #expect(ours, "this call made the connection")
            #expect(try await client.connect(strap.path) == false, "already connected: nothing to do")

            let characteristics = await client.characteristics(of: strap.path)
            let measurement = try #require(characteristics.first { $0.uuid == Self.hr })
            #expect(measurement.flags == ["notify"])
            #expect(measurement.serviceUUID == BluetoothUUID(0x180D))
            let location = try #require(characteristics.first { $0.uuid == Self.location })
            #expect(try await client.read(location) == [0x01])

            var frames: [[UInt8]] = []
            for await event in try await client.notifications(measurement) {
                if case .value(let bytes) = event { frames.append(bytes) }
                if frames.count == 3 { break }
            }
            #expect(frames.count == 3)
            for frame in frames { #expect((try? HeartRateMeasurement(decoding: frame)) != nil) }

            try await client.disconnect(strap.path)
            let after = await client.device(strap.address, on: adapter)
            #expect(after?.connected == false)
        }
    }

    @Test func servicesCharacteristicsAndDescriptorsByUUID() async throws {
        try await BlueZClientTests.withClient("basic", adjust: Self.known) { client in
            let adapter = try await client.selectAdapter()
            let address = try #require(BluetoothAddress("D2:4B:7E:10:20:30"))
            let strap = try #require(await client.device(address, on: adapter))
            _ = try await client.connect(strap.path, require: [Self.hr, BluetoothUUID(0x2A19)])
            // bluetoothd keeps GAP (0x1800) to itself: no object for it.
            let services = await client.services(of: strap.path)
            #expect(
                services.map(\.uuid)
                    == [0x1801, 0x180A, 0x180D, 0x180F].map { BluetoothUUID(UInt16($0)) })
            #expect(services.allSatisfy { $0.primary })
            // A 128-bit spelling finds the 16-bit characteristic; the service narrows the search.
            let long = try #require(BluetoothUUID("00002a37-0000-1000-8000-00805f9b34fb"))
            let measurement = try #require(await client.characteristic(long, of: strap.path))
            #expect(measurement.uuid == Self.hr)
            #expect(
                await client.characteristic(Self.hr, service: BluetoothUUID(0x180F), of: strap.path) == nil)
            let descriptors = await client.descriptors(of: measurement)
            #expect(descriptors.map(\.uuid) == [BluetoothUUID(0x2902)])
            #expect(
                descriptors.first?.path.description.hasPrefix(measurement.path.description + "/desc") == true)
            #expect(descriptors.first.map { $0.path.isDescendant(of: measurement.path) } == true)
        }
    }

    @Test func routineConnectFailureIsRetried() async throws {
        try await BlueZClientTests.withClient("connect-abort", adjust: Self.known) { client in
            let adapter = try await client.selectAdapter()
            let strap = try #require(await client.device(BluetoothAddress("D2:4B:7E:10:20:34")!, on: adapter))
            #expect(try await client.connect(strap.path, require: [Self.hr]))
        }
    }

    /// bluetoothd can lose track of a link: Connect answers, Connected never follows, and every
    /// later Connect does the same. A connection attempt that times out is cancelled with
    /// Disconnect, so the next one starts afresh and connects.
    @Test func aStalledConnectionIsCancelledSoTheNextAttemptConnects() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("stall-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let adjust: (inout Scenario) -> Void = { scenario in
            Self.known(&scenario)
            scenario.devices[0].connectFailures = [Scenario.DBusFailure(stall: true)]
        }
        try await BlueZClientTests.withClient("connect-abort", adjust: adjust, log: log) { client, _ in
            let adapter = try await client.selectAdapter()
            let strap = try #require(await client.device(BluetoothAddress("D2:4B:7E:10:20:34")!, on: adapter))
            do {
                _ = try await client.connect(strap.path, require: [Self.hr], timeout: .seconds(1))
                Issue.record("the stalled connection was reported as made")
            } catch let error as BlueZError {
                #expect(error.code == .timeout)
            }
            #expect(try await client.connect(strap.path, require: [Self.hr]))
        }
        let order = try BlueZClientTests.logEntries(log).filter {
            ["connect-stalled", "Disconnect", "stall-cleared", "state"].contains($0)
        }
        #expect(order == ["connect-stalled", "Disconnect", "stall-cleared", "state"])
    }

    /// Another program's Connect is pending when hrm's comes: bluetoothd 5.66 refuses hrm's
    /// ("Operation already in progress"), and hrm waits for that connection instead of sending
    /// Disconnect, which would cancel the other program's (two programs doing that to each other
    /// never connected). The connection is not hrm's to close.
    @Test func anotherProgramsPendingConnectIsWaitedForNotCancelled() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("other-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        try await BlueZClientTests.withClient("basic", adjust: Self.known, log: log) { client, simulator in
            let adapter = try await client.selectAdapter()
            let address = "D2:4B:7E:10:20:30"
            let strap = try #require(await client.device(BluetoothAddress(address)!, on: adapter))
            await simulator.holdConnects(address: address)
            // The other program: a bare Device1.Connect, pending while the simulator holds it.
            let other = Task {
                try await client.call(
                    "Connect", on: strap.path.objectPath, interface: BlueZNames.Call.device,
                    timeout: .seconds(30))
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while await !simulator.connectPending(address: address) {
                try #require(ContinuousClock.now < deadline, "the other program's Connect became pending")
                try await Task.sleep(for: .milliseconds(5))
            }
            async let ours = client.connect(strap.path, require: [Self.hr])
            // Let go once hrm's Connect has been refused: the log has its error.
            while (try? String(contentsOfFile: log, encoding: .utf8))?.contains(#""event":"error""#) != true {
                try #require(ContinuousClock.now < deadline, "hrm's Connect was refused")
                try await Task.sleep(for: .milliseconds(5))
            }
            await simulator.holdConnects(address: address, false)
            #expect(try await ours == false, "the other program made the connection")
            _ = try await other.value
            #expect(await client.device(strap.address, on: adapter)?.connected == true)
        }
        let entries = try BlueZClientTests.logEntries(log)
        #expect(!entries.contains("Disconnect"), "\(entries)")
    }

    @Test func notificationStreamEndsWhenTheLinkDrops() async throws {
        try await BlueZClientTests.withClient(
            "drops",
            adjust: { scenario in
                Self.known(&scenario)
                scenario.devices[0].drops = []
            }
        ) { client, simulator in
            let adapter = try await client.selectAdapter()
            let strap = try #require(await client.device(BluetoothAddress("D2:4B:7E:10:20:32")!, on: adapter))
            _ = try await client.connect(strap.path, require: [Self.hr])
            let measurement = try #require(
                await client.characteristics(of: strap.path).first { $0.uuid == Self.hr })
            var count = 0
            for await _ in try await client.notifications(measurement) {
                count += 1
                // The drop, once values flow.
                if count == 3 { await simulator.dropLink(address: "D2:4B:7E:10:20:32", for: 1.0) }
            }
            #expect(count > 0, "values came before the drop, and the stream then finished")
            #expect(await client.device(strap.address, on: adapter)?.connected == false)
        }
    }
}
