import BlueZSimulator
import DBus
import Foundation
import HeartRate
import Testing

/// hrm-sim playing a bluetoothd that misbehaves on GATT calls: `callFailures` (errors and calls
/// never answered), `acquireFd` (AcquireNotify handing out the wrong kind of descriptor) and
/// `valueType` (notifications whose Value has the wrong D-Bus type).
@Suite(.timeLimit(.minutes(1))) struct HostileGATTTests {
    typealias Rig = SimulatorBehaviourTests.Rig
    static let device = SimulatorBehaviourTests.device
    static let measurement = SimulatorBehaviourTests.measurement
    static let location = SimulatorBehaviourTests.location
    static let controlPoint = SimulatorBehaviourTests.controlPoint
    static let characteristic: InterfaceName = "org.bluez.GattCharacteristic1"

    /// A rig whose strap is known (no discovery needed), changed by `adjust`, connected with its
    /// GATT objects exported; `log` gets the simulator's log.
    static func withConnectedRig(
        adjust: @escaping (inout Scenario.Device) -> Void, log: String? = nil,
        _ body: (Rig) async throws -> Void
    ) async throws {
        let setUp: (inout Scenario) throws -> Void = { scenario in
            try #require(!scenario.devices.isEmpty)
            scenario.devices[0].known = true
            adjust(&scenario.devices[0])
        }
        try await SimulatorBehaviourTests.withRig(scenario: "basic", adjust: setUp, log: log) { rig in
            let events = try await rig.client.objectEvents(sender: "org.bluez", pathNamespace: "/org/bluez")
            var iterator = events.makeAsyncIterator()
            _ = try await rig.call(Self.device, "org.bluez.Device1", "Connect")
            let exported = await SimulatorBehaviourTests.next(&iterator) {
                if case .interfacesAdded(let path, _) = $0 { path == Self.controlPoint } else { false }
            }
            try #require(exported.found != nil, "the GATT objects came")
            try await body(rig)
        }
    }

    /// The simulator's log entries, in order.
    static func entries(_ log: String) throws -> [[String: Any]] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func temporaryLog() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID()).jsonl").path
    }

    /// The D-Bus error a call failed with (nil when it succeeded).
    static func failure(_ body: () async throws(DBusError) -> Message) async -> DBusError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    /// The descriptor an AcquireNotify call returned (its MTU checked), once the reply message,
    /// which holds a copy of it, is gone.
    static func descriptor(_ acquire: () async throws -> Message) async throws -> UnixFD {
        let (fd, mtu) = try await acquire().decode(UnixFD.self, UInt16.self)
        #expect(mtu == 517)
        return fd
    }

    /// Each member's failures are used one per call of that member, in order; the call after
    /// them is served as usual.
    @Test func callFailuresOnePerCallOfTheirMember() async throws {
        let log = Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        let failed = Scenario.DBusFailure(
            error: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")
        try await Self.withConnectedRig(
            adjust: { device in
                device.callFailures = [
                    "ReadValue": [
                        failed, Scenario.DBusFailure(error: "org.bluez.Error.NotPermitted", message: "np"),
                    ],
                    "WriteValue": [
                        Scenario.DBusFailure(error: "org.bluez.Error.InProgress", message: "busy")
                    ],
                    "AcquireNotify": [
                        Scenario.DBusFailure(error: "org.bluez.Error.NotSupported", message: "ns")
                    ],
                    "StartNotify": [
                        Scenario.DBusFailure(error: "org.bluez.Error.NotConnected", message: "nc")
                    ],
                    "StopNotify": [failed],
                ]
            }, log: log
        ) { rig in
            let read = { () async throws(DBusError) -> Message in
                try await rig.call(Self.location, Self.characteristic, "ReadValue", [.emptyMap])
            }
            #expect(await Self.failure(read)?.message == "Operation failed with ATT error: 0x0e")
            #expect(await Self.failure(read)?.name.rawValue == "org.bluez.Error.NotPermitted")
            #expect(try await read().body == [.bytes([0x01])])

            let write = { () async throws(DBusError) -> Message in
                try await rig.call(
                    Self.controlPoint, Self.characteristic, "WriteValue", [.bytes([0x01]), .emptyMap])
            }
            #expect(await Self.failure(write)?.name.rawValue == "org.bluez.Error.InProgress")
            #expect(await Self.failure(write) == nil)

            let acquire = { () async throws(DBusError) -> Message in
                try await rig.call(Self.measurement, Self.characteristic, "AcquireNotify", [.emptyMap])
            }
            #expect(await Self.failure(acquire)?.name.rawValue == "org.bluez.Error.NotSupported")
            // The reply message holds a copy of the descriptor: only the decoded one outlives it.
            try await Self.descriptor(acquire).close()

            let start = { () async throws(DBusError) -> Message in
                try await rig.call(Self.measurement, Self.characteristic, "StartNotify")
            }
            #expect(await Self.failure(start)?.name.rawValue == "org.bluez.Error.NotConnected")
            #expect(await Self.failure(start) == nil)

            let stop = { () async throws(DBusError) -> Message in
                try await rig.call(Self.measurement, Self.characteristic, "StopNotify")
            }
            #expect(await Self.failure(stop)?.name.rawValue == "org.bluez.Error.Failed")
            #expect(await Self.failure(stop) == nil)
        }
        let errors = try Self.entries(log).filter { $0["event"] as? String == "error" }
        #expect(
            errors.compactMap { $0["member"] as? String } == [
                "ReadValue", "ReadValue", "WriteValue", "AcquireNotify", "StartNotify", "StopNotify",
            ], "each failure is logged as an error reply")
    }

    /// A stall is a call never answered: the caller's timeout ends it; the next call of that
    /// member is answered; the simulator lets it go when the caller leaves the bus.
    @Test func aStalledCallIsNeverAnswered() async throws {
        let log = Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        var scenario = try ScenarioCatalog.load("basic")
        scenario.devices[0].known = true
        scenario.devices[0].callFailures = ["ReadValue": [Scenario.DBusFailure(stall: true)]]
        try await withSimulator(scenario, log: log) { _, bus in
            try await withClient(on: bus) { client in
                _ = try await client.call(
                    destination: "org.bluez", path: Self.device, interface: "org.bluez.Device1",
                    member: "Connect", timeout: .seconds(10))
                // ReadValue on the location as soon as it exists.
                var exported = false
                for _ in 0..<100 where !exported {
                    let objects = try await client.managedObjects(destination: "org.bluez")
                    exported = objects[Self.location] != nil
                    if !exported { try await Task.sleep(for: .milliseconds(50)) }
                }
                try #require(exported)
                try await withClient(on: bus) { other in
                    let started = ContinuousClock.now
                    do throws(DBusError) {
                        _ = try await other.call(
                            destination: "org.bluez", path: Self.location, interface: Self.characteristic,
                            member: "ReadValue", body: [.emptyMap], timeout: .milliseconds(500))
                        Issue.record("the stalled call was answered")
                    } catch {
                        #expect(error.code == .noReply)
                    }
                    #expect(ContinuousClock.now - started >= .milliseconds(450))
                    let next = try await other.call(
                        destination: "org.bluez", path: Self.location, interface: Self.characteristic,
                        member: "ReadValue", body: [.emptyMap], timeout: .seconds(5))
                    #expect(next.body == [.bytes([0x01])])
                }
                // The other client left: its stalled call is let go (logged once that is seen; the
                // deadline only proves "not hung").
                let deadline = ContinuousClock.now + .seconds(30)
                var ended = false
                while !ended && ContinuousClock.now < deadline {
                    ended = try Self.entries(log).contains { $0["event"] as? String == "stall-ended" }
                    if !ended { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(ended)
            }
        }
        let events = try Self.entries(log).compactMap { $0["event"] as? String }
        #expect(events.filter { $0 == "call-stalled" }.count == 1)
    }

    /// AcquireNotify hands out what `acquireFd` says; the frames go into the ones with a
    /// simulator's end, and closing the descriptor ends the acquisition (another AcquireNotify
    /// is served).
    @Test(arguments: Scenario.AcquiredDescriptor.allCases)
    func acquireFdKinds(kind: Scenario.AcquiredDescriptor) async throws {
        try await Self.withConnectedRig(adjust: { $0.acquireFd = kind.rawValue }) { rig in
            let fd = try await Self.descriptor {
                try await rig.call(Self.measurement, Self.characteristic, "AcquireNotify", [.emptyMap])
            }
            let descriptor = try #require(fd.descriptor)
            var info = stat()
            try #require(fstat(descriptor, &info) == 0)
            var type: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length)
            switch kind {
            case .seqpacket:
                #expect(info.st_mode & S_IFMT == S_IFSOCK)
                #expect(type == Int32(SOCK_SEQPACKET.rawValue))
            case .stream:
                #expect(info.st_mode & S_IFMT == S_IFSOCK)
                #expect(type == Int32(SOCK_STREAM.rawValue))
            case .pipe: #expect(info.st_mode & S_IFMT == S_IFIFO)
            case .file: #expect(info.st_mode & S_IFMT == S_IFREG)
            case .devnull: #expect(info.st_mode & S_IFMT == S_IFCHR)
            }
            if [.seqpacket, .stream, .pipe].contains(kind) {
                #expect(await readable(descriptor, within: .seconds(5)))
                var buffer = [UInt8](repeating: 0, count: 600)
                #expect(read(descriptor, &buffer, buffer.count) > 1, "frames are written into it")
            }
            fd.close()
            let again = try await Self.descriptor {
                try await rig.call(Self.measurement, Self.characteristic, "AcquireNotify", [.emptyMap])
            }
            again.close()
        }
    }

    /// StartNotify while the notifications are acquired is refused as bluetoothd 5.66 does.
    @Test func startNotifyWhileAcquired() async throws {
        try await Self.withConnectedRig(adjust: { _ in }) { rig in
            let fd = try await Self.descriptor {
                try await rig.call(Self.measurement, Self.characteristic, "AcquireNotify", [.emptyMap])
            }
            defer { fd.close() }
            let refused = await Self.failure { () async throws(DBusError) -> Message in
                try await rig.call(Self.measurement, Self.characteristic, "StartNotify")
            }
            #expect(refused?.name.rawValue == "org.bluez.Error.NotPermitted")
            #expect(refused?.message == "Notify acquired")
        }
    }

    /// With `valueType`, the PropertiesChanged that carry StartNotify's notifications have a
    /// Value of that type.
    @Test(arguments: Scenario.NotificationValueType.allCases)
    func valueTypes(type: Scenario.NotificationValueType) async throws {
        try await Self.withConnectedRig(adjust: { $0.valueType = type.rawValue }) { rig in
            let events = try await rig.client.objectEvents(sender: "org.bluez", pathNamespace: "/org/bluez")
            var iterator = events.makeAsyncIterator()
            _ = try await rig.call(Self.measurement, Self.characteristic, "StartNotify")
            let found = await SimulatorBehaviourTests.next(&iterator) {
                SimulatorBehaviourTests.changed($0, Self.measurement, "Value") != nil
            }
            let event = try #require(found.found)
            let value = try #require(SimulatorBehaviourTests.changed(event, Self.measurement, "Value"))
            switch (type, value) {
            case (.bytes, .bytes(let frame)):
                #expect((try? HeartRateMeasurement(decoding: frame)) != nil)
            case (.string, .string(let hex)):
                #expect(hex.count >= 4 && hex.allSatisfy(\.isHexDigit))
            case (.int32s, .array(.int32, let items)):
                #expect(items.count >= 2)
            default:
                Issue.record("Value \(value) for valueType \(type.rawValue)")
            }
        }
    }
}
