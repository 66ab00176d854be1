import BlueZSimulator
import Foundation
import Testing

@testable import BlueZ

@Suite(.timeLimit(.minutes(1))) struct DiscoveryTests {
    /// The first `count` distinct devices the stream yields (by address), or fewer after `timeout`
    /// (generous: it only proves "not hung").
    static func collect(
        _ stream: AsyncStream<DiscoveredDevice>, count: Int, timeout: Duration = .seconds(30)
    ) async -> [BluetoothAddress: DiscoveredDevice] {
        await withTaskGroup(of: [BluetoothAddress: DiscoveredDevice]?.self) { group in
            group.addTask {
                var found: [BluetoothAddress: DiscoveredDevice] = [:]
                // Cancellation (the timer below) ends the iteration with what was found so far.
                for await device in stream {
                    found[device.address] = device
                    if found.count >= count { break }
                }
                return found
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            var result: [BluetoothAddress: DiscoveredDevice] = [:]
            while let next = await group.next() {
                if let found = next {
                    result = found
                }
                group.cancelAll()
            }
            return result
        }
    }

    /// True once the adapter says it is not discovering any more (within 30 s: "not hung").
    static func discoveryStops(_ client: BlueZClient) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await client.adapters().first?.discovering == false { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func findsTheStrapWithItsAdvertisement() async throws {
        try await BlueZClientTests.withClient("basic") { client in
            let adapter = try await client.selectAdapter()
            let stream = try await client.discover(adapter: adapter)
            let found = await Self.collect(stream, count: 1)
            let strap = try #require(found[BluetoothAddress("D2:4B:7E:10:20:30")!])
            #expect(strap.name == "Polar H10 7E102030")
            #expect(strap.rssi == -58)
            #expect(strap.uuids.contains(BluetoothUUID(0x180D)))
            #expect(strap.manufacturerData[0x006B] == [0x33, 0x0B])
            #expect(strap.appearance == 833)
            #expect(strap.connected == false)
        }
    }

    @Test func filtersByServiceUnlessAll() async throws {
        try await BlueZClientTests.withClient("two-straps") { client in
            let adapter = try await client.selectAdapter()
            // The first two found are the monitors, not the bike computer beside them.
            let monitors = await Self.collect(try await client.discover(adapter: adapter), count: 2)
            #expect(Set(monitors.values.compactMap(\.name)) == ["HRM-Pro:123456", "TICKR 1A2B"])
            // The first discovery has ended (its stream is gone) before the second begins.
            #expect(await Self.discoveryStops(client))
            let everything = await Self.collect(
                try await client.discover(adapter: adapter, services: nil), count: 3)
            #expect(everything.count == 3, "the bike computer too")
        }
    }

    @Test func endingTheStreamStopsDiscovery() async throws {
        try await BlueZClientTests.withClient("basic") { client in
            let adapter = try await client.selectAdapter()
            do {
                let stream = try await client.discover(adapter: adapter)
                _ = await Self.collect(stream, count: 1)
            }
            #expect(await Self.discoveryStops(client))
        }
    }

    /// A finder that has chosen stops the scan and has bluetoothd's answer before it connects (a
    /// Connect during a scan waits for the scan's end). The stream's end then sends no second
    /// StopDiscovery, which could stop a later scan.
    @Test func stopDiscoveryStopsTheScanOnce() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        try await BlueZClientTests.withClient("basic", log: log) { client in
            let adapter = try await client.selectAdapter()
            do {
                let stream = try await client.discover(adapter: adapter)
                #expect(await Self.collect(stream, count: 1).count == 1)
                await client.stopDiscovery(on: adapter)
                // Nothing left to stop: no call.
                await client.stopDiscovery(on: adapter)
            }
            // It has stopped: a second StartDiscovery of this client would fail with InProgress.
            let again = try await client.discover(adapter: adapter)
            #expect(await Self.collect(again, count: 1).count == 1)
            await client.stopDiscovery(on: adapter)
        }
        let calls = try BlueZClientTests.logEntries(log).filter { $0.hasSuffix("Discovery") }
        #expect(calls == ["StartDiscovery", "StopDiscovery", "StartDiscovery", "StopDiscovery"])
    }

    @Test func poweredOffAdapterCannotDiscover() async throws {
        try await BlueZClientTests.withClient("adapter-off") { client in
            let adapter = try await client.selectAdapter()
            do {
                _ = try await client.discover(adapter: adapter)
                Issue.record("discovery started")
            } catch {
                #expect((error as? BlueZError)?.code == .adapterPoweredOff)
            }
        }
    }

    @Test func rssi127IsUnknown() async throws {
        try await BlueZClientTests.withClient("lab") { client in
            let adapter = try await client.selectAdapter("hci0")
            let found = await Self.collect(try await client.discover(adapter: adapter), count: 1)
            #expect(found.values.first?.name == "Lab HRM")
            #expect(found.values.first?.rssi == nil)
        }
    }
}
