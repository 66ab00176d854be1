import BlueZSimulator
import DBus
import Synchronization
import Testing

@testable import BlueZ

/// The mirror's subscription is bounded: a flood past the bound, while its follower is held,
/// leaves a gap; the mirror loads bluetoothd's objects again and ends right, and a StartNotify
/// session counts the notifications lost as dropped.
@Suite(.timeLimit(.minutes(1))) struct BoundedMirrorTests {
    static let strap = "D2:4B:7E:10:20:30"
    static let hr = BluetoothUUID(0x2A37)
    static let capacity = 64
    static let burst = 300

    /// Holds whoever passes while it is closed (the mirror's follower, before a signal), until
    /// it opens or the holder is cancelled.
    final class Gate: Sendable {
        private struct State {
            var open = true
            var held: [CheckedContinuation<Void, Never>] = []
            var holdWaiters: [CheckedContinuation<Void, Never>] = []
        }
        private let state = Mutex(State())

        func close() { state.withLock { $0.open = false } }

        func open() {
            let held = state.withLock { state in
                state.open = true
                defer { state.held = [] }
                return state.held
            }
            for continuation in held { continuation.resume() }
        }

        func pass() async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let (go, waiters) = state.withLock { state in
                        if state.open { return (true, [CheckedContinuation<Void, Never>]()) }
                        state.held.append(continuation)
                        defer { state.holdWaiters = [] }
                        return (false, state.holdWaiters)
                    }
                    for waiter in waiters { waiter.resume() }
                    if go { continuation.resume() }
                }
            } onCancel: {
                open()
            }
        }

        /// Returns once someone is held.
        func holding() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if !state.held.isEmpty { return true }
                    state.holdWaiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// A heart-rate frame (16-bit bpm) that tells the `i`th of a burst.
    static func frame(_ i: Int) -> [UInt8] { [0x01, UInt8(i & 0xFF), UInt8(i >> 8)] }

    struct Outcome {
        var events: [NotificationEvent] = []
        var mirrored: [ObjectPath: [String: ObjectMirror.Properties]] = [:]
        var fresh: [ObjectPath: [String: ObjectMirror.Properties]] = [:]
        var battery: Int? = nil
    }

    /// With a StartNotify session on the strap's 0x2A37: holds the mirror's follower on one
    /// notification (frame 0), then the battery level changes to 42 and `burst` more frames come,
    /// far more than the mirror's stream holds (`capacity`). Once every signal has reached the
    /// client the follower goes on. Returns what the notification stream gave up to the last
    /// frame, the mirror then and bluetoothd's objects then, and the first battery level the
    /// client reported after the hold.
    static func flood() async throws -> Outcome {
        var outcome = Outcome()
        let gate = Gate()
        let options = MirrorOptions(signalCapacity: capacity, beforeEachSignal: { await gate.pass() })
        let setUp: (inout Scenario) -> Void = { scenario in
            scenario.devices[0].known = true
            // No frames but the test's own, no battery change but the test's own.
            scenario.devices[0].heartRate.interval = 3600
            scenario.events = []
        }
        try await BlueZClientTests.withClient("basic", adjust: setUp, mirror: options) { client, simulator in
            defer { gate.open() }
            let adapter = try await client.selectAdapter()
            let address = try #require(BluetoothAddress(Self.strap))
            let device = try #require(await client.device(address, on: adapter))
            _ = try await client.connect(device.path, require: [Self.hr])
            let measurement = try #require(await client.characteristic(Self.hr, of: device.path))
            let stream = try await client.notifications(measurement, using: .startNotify)
            let levels = await client.batteryLevels(device.path)

            gate.close()
            #expect(await simulator.notifyBurst(address: Self.strap, frames: [Self.frame(0)]) == 1)
            // The follower holds frame 0 (or a signal before it): all that follows waits in the
            // mirror's stream, the battery change among the oldest.
            await gate.holding()
            await simulator.setBattery(address: Self.strap, percent: 42)
            let frames = (1...Self.burst).map(Self.frame)
            #expect(await simulator.notifyBurst(address: Self.strap, frames: frames) == Self.burst)
            // bluetoothd's reply comes after every signal it sent before it: all are in the stream.
            _ = try await client.connection.managedObjects(destination: BlueZNames.service)
            gate.open()

            var iterator = stream.makeAsyncIterator()
            while let event = await iterator.next() {
                outcome.events.append(event)
                if event == .value(Self.frame(Self.burst)) { break }
            }
            // The follower applied everything up to the last frame before it reached the stream.
            outcome.mirrored = await client.mirror.objects
            outcome.fresh = try await client.connection.managedObjects(destination: BlueZNames.service)
            outcome.battery = await HostileNotificationTests.first(of: levels)
            await client.releaseNotifications(measurement)
            try await client.disconnect(device.path)
        }
        return outcome
    }

    /// The battery change was dropped from the mirror's stream: only loading the objects again
    /// brings it, to the mirror and to the battery watcher, and the mirror ends as bluetoothd is.
    @Test func theMirrorLoadsTheObjectsAgainAfterAGapAndEndsRight() async throws {
        let outcome = try await Self.flood()
        let battery = outcome.mirrored.first { $0.value[BlueZNames.Interface.battery] != nil }
        #expect(battery?.value[BlueZNames.Interface.battery]?["Percentage"] == .byte(42))
        #expect(outcome.battery == 42)
        #expect(!outcome.mirrored.isEmpty)
        #expect(outcome.mirrored == outcome.fresh)
    }

    /// Every frame of the burst either reached the stream or was counted as dropped, the drop
    /// said before the values after it; the newest `capacity` frames arrived, in order.
    @Test func startNotifyCountsTheNotificationsTheMirrorDropped() async throws {
        let outcome = try await Self.flood()
        var values: [[UInt8]] = []
        var dropped = 0
        var droppedBeforeTheKept = false
        let kept = Array((Self.burst - Self.capacity + 1...Self.burst).map(Self.frame))
        for event in outcome.events {
            switch event {
            case .value(let bytes):
                values.append(bytes)
            case .dropped(let count):
                dropped += count
                if !values.contains(kept[0]) { droppedBeforeTheKept = true }
            default:
                Issue.record("unexpected \(event)")
            }
        }
        #expect(values.count + dropped == Self.burst + 1)
        #expect(dropped >= Self.burst - Self.capacity)
        #expect(Array(values.suffix(Self.capacity)) == kept)
        #expect(droppedBeforeTheKept)
        // Nothing delivered twice, nothing out of order.
        let order = values.map { Int($0[1]) | Int($0[2]) << 8 }
        #expect(order == order.sorted() && Set(order).count == order.count)
    }
}
