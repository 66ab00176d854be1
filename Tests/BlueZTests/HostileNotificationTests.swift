import BlueZSimulator
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import BlueZ

/// Notifications from a bluetoothd that misbehaves (hrm-sim's `acquireFd`, `valueType`).
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

    // MARK: - AcquireNotify handing out something else than a SEQPACKET socket

    /// `.automatic`: the descriptor is closed (bluetoothd's acquisition released), the stream says
    /// why it fell back, and notifications come by StartNotify: once, no loop of subscriptions.
    @Test(arguments: wrongDescriptors.map(\.kind))
    func automaticFallsBackToStartNotify(kind: String) async throws {
        let words = try #require(Self.wrongDescriptors.first { $0.kind == kind }?.words)
        let log = Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        var events: [NotificationEvent] = []
        try await Self.withMeasurement(log: log, adjust: { $0.acquireFd = kind }) { client, measurement in
            let deadline = ContinuousClock.now + .seconds(10)
            for await event in try await client.notifications(measurement) {
                events.append(event)
                if events.count == 6 || ContinuousClock.now > deadline { break }
            }
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
            let deadline = ContinuousClock.now + .seconds(10)
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
}
