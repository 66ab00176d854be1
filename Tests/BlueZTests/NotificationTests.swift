import BlueZSimulator
import Foundation
import Testing

@testable import BlueZ

/// Notification streams across link drops, by both methods and in both GATT cache modes: every
/// frame the simulator sent while connected arrives once, in order.
@Suite(.timeLimit(.minutes(1))) struct NotificationTests {
    static let strap = "D2:4B:7E:10:20:32"
    static let hr = BluetoothUUID(0x2A37)

    enum Method: String, CaseIterable, Sendable {
        case startNotify, acquireNotify
        var notifyMethod: NotifyMethod { self == .startNotify ? .startNotify : .acquireNotify }
        var via: String { self == .startNotify ? "signal" : "fd" }
    }

    /// The hex of every frame the simulator sent by `via`, in order, from its log.
    static func sent(_ log: String, via: String) throws -> [String] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String == "notify", object["via"] as? String == via
            else { return nil }
            return object["hex"] as? String
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).leftPadded(2) }.joined()
    }

    @Test(arguments: Method.allCases, [Scenario.GattCache.always, .no])
    func everyFrameOnceAcrossADrop(method: Method, cache: Scenario.GattCache) async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var received: [String] = []
        var streams = 0
        let adjust: (inout Scenario) -> Void = { scenario in
            scenario.gattCache = cache
            scenario.devices[0].known = true
            scenario.devices[0].heartRate.interval = 0.1
            scenario.devices[0].drops = []
        }
        try await BlueZClientTests.withClient("drops", adjust: adjust, log: log) { client, simulator in
            let adapter = try await client.selectAdapter()
            let address = try #require(BluetoothAddress(Self.strap))
            let device = try #require(await client.device(address, on: adapter))
            // Until the second stream has brought 10 frames (events, not a time a loaded machine
            // may not fit in); the deadline only proves "not hung".
            let deadline = ContinuousClock.now + .seconds(60)
            func done() -> Bool { streams >= 2 && received.count >= 20 }
            while ContinuousClock.now < deadline && !done() {
                do {
                    _ = try await client.connect(device.path, require: [Self.hr], timeout: .seconds(5))
                } catch {
                    // Unreachable for the drop's 0.5 s: try again a little later.
                    try await Task.sleep(for: .milliseconds(200))
                    continue
                }
                let measurement = try #require(
                    await client.characteristics(of: device.path).first { $0.uuid == Self.hr })
                streams += 1
                for await event in try await client.notifications(measurement, using: method.notifyMethod) {
                    if case .value(let bytes) = event { received.append(Self.hex(bytes)) }
                    // The drop comes once the first stream has run a while (0.5 s unreachable).
                    if streams == 1 && received.count == 10 {
                        await simulator.dropLink(address: Self.strap, for: 0.5)
                    }
                    if done() || ContinuousClock.now >= deadline { break }
                }
            }
        }

        #expect(streams >= 2, "the stream ended at the drop and a new one began after reconnecting")
        #expect(received.count >= 20)
        let sent = try Self.sent(log, via: method.via)
        // Frames sent after the last one taken may still have been in flight: everything received
        // is what was sent, in order, with nothing missing before it and nothing twice.
        #expect(Array(sent.prefix(received.count)) == received)
    }

    @Test func automaticPrefersAcquireNotifyAndReleasingClosesTheSocket() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("acquire-\(UUID()).jsonl")
            .path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var count = 0
        let adjust: (inout Scenario) -> Void = { scenario in
            scenario.devices[0].known = true
            scenario.devices[0].heartRate.interval = 0.1
        }
        try await BlueZClientTests.withClient("basic", adjust: adjust, log: log) { client in
            let adapter = try await client.selectAdapter()
            let address = try #require(BluetoothAddress("D2:4B:7E:10:20:30"))
            let device = try #require(await client.device(address, on: adapter))
            _ = try await client.connect(device.path, require: [Self.hr])
            let measurement = try #require(
                await client.characteristics(of: device.path).first { $0.uuid == Self.hr })

            let stream = try await client.notifications(measurement)
            for await _ in stream {
                count += 1
                if count == 2 { break }
            }
            await client.releaseNotifications(measurement)
            try await client.disconnect(device.path)
        }

        let events = try BlueZClientTests.logEntries(log)
        #expect(count == 2)
        #expect(events.contains("AcquireNotify"))
        #expect(!events.contains("StartNotify"))
        let released = try #require(events.firstIndex(of: "acquire-released"))
        let disconnect = try #require(events.firstIndex(of: "Disconnect"))
        #expect(released < disconnect, "the socket is released before Disconnect is called")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
