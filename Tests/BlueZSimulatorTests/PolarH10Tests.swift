import BlueZSimulator
import DBus
import ECG
import Foundation
import HeartRate
import PolarPMD
import Testing

/// hrm-sim playing a Polar H10 (`profile: polar-h10`): pairing through AgentManager1 and
/// Device1.Pair(), the PMD control point before and after pairing, and the ECG and acceleration
/// streams, driven by raw D-Bus calls as a client of bluetoothd makes them.
@Suite(.timeLimit(.minutes(2))) struct PolarH10Tests {
    typealias Iterator = AsyncStream<Sequenced<ObjectEvent>>.Iterator
    static let address = "A0:9E:1A:1A:2B:3C"
    static let device: ObjectPath = "/org/bluez/hci0/dev_A0_9E_1A_1A_2B_3C"
    static let characteristic: InterfaceName = "org.bluez.GattCharacteristic1"
    static let deviceInterface: InterfaceName = "org.bluez.Device1"
    static let agentManager: InterfaceName = "org.bluez.AgentManager1"
    static let agent: ObjectPath = "/hrm/agent"

    /// The H10's characteristics, found by UUID.
    struct Paths {
        var controlPoint: ObjectPath
        var data: ObjectPath
        var measurement: ObjectPath
    }

    /// A test's simulator, client, the client's event stream, the H10's paths and the log.
    struct Rig {
        let simulator: Simulator
        let client: Connection
        let paths: Paths
        let log: String

        func call(
            _ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ body: [Value] = [],
            timeout: Duration = .seconds(10)
        ) async throws(DBusError) -> Message {
            try await client.call(
                destination: "org.bluez", path: path, interface: interface, member: member, body: body,
                timeout: timeout)
        }

        func write(_ bytes: [UInt8], timeout: Duration = .seconds(10)) async throws(DBusError) {
            _ = try await call(
                paths.controlPoint, PolarH10Tests.characteristic, "WriteValue",
                [.bytes(bytes), .propertyMap([:])],
                timeout: timeout)
        }

        func registerAgent(_ capability: String = "NoInputNoOutput") async throws(DBusError) {
            _ = try await call(
                "/org/bluez", PolarH10Tests.agentManager, "RegisterAgent",
                [.objectPath(PolarH10Tests.agent), .string(capability)])
        }

        func pair() async throws(DBusError) {
            _ = try await call(PolarH10Tests.device, PolarH10Tests.deviceInterface, "Pair")
        }

        /// Subscribes to both PMD characteristics (StartNotify).
        func subscribe() async throws {
            _ = try await call(paths.controlPoint, PolarH10Tests.characteristic, "StartNotify")
            _ = try await call(paths.data, PolarH10Tests.characteristic, "StartNotify")
        }
    }

    /// An H10 known to bluetoothd (no discovery), changed by `adjust`: heart rate every 0.25 s
    /// with a clearly varying rhythm.
    static func scenario(_ adjust: (inout Scenario.Device) -> Void = { _ in }) -> Scenario {
        var scenario = Scenario()
        var device = Scenario.Device.polarH10(address: address)
        device.known = true
        device.heartRate.interval = 0.25
        device.heartRate.variability = 12
        device.heartRate.seed = 5
        adjust(&device)
        scenario.devices = [device]
        return scenario
    }

    static func temporaryLog() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("h10-\(UUID()).jsonl").path
    }

    /// Runs `body` with the H10 connected and its services resolved; `timing` adjusted by `adjustTiming`.
    static func withH10(
        _ scenario: Scenario, adjustTiming: (inout Simulator.Timing) -> Void = { _ in },
        _ body: (Rig, inout Iterator) async throws -> Void
    ) async throws {
        let log = temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        var timing = Simulator.Timing()
        timing.disconnect = 0.2
        timing.servicesResolved = 0.05
        adjustTiming(&timing)
        try await withSimulator(scenario, timing: timing, log: log) { simulator, bus in
            try await withClient(on: bus) { client in
                let events = try await client.objectEvents(sender: "org.bluez", pathNamespace: "/org/bluez")
                var iterator = events.makeAsyncIterator()
                _ = try await client.call(
                    destination: "org.bluez", path: device, interface: deviceInterface, member: "Connect",
                    timeout: .seconds(10))
                let resolved = await SimulatorBehaviourTests.next(&iterator, timeout: .seconds(10)) {
                    SimulatorBehaviourTests.changed($0, device, "ServicesResolved") == .boolean(true)
                }
                try #require(resolved.found != nil, "the H10's services resolved")
                let objects = try await client.managedObjects(destination: "org.bluez")
                func path(_ uuid: String) throws -> ObjectPath {
                    let found = objects.first {
                        $0.key.isDescendant(of: device)
                            && $0.value[characteristic.rawValue]?["UUID"] == .string(uuid)
                    }
                    return try #require(found?.key, "a characteristic \(uuid)")
                }
                let paths = Paths(
                    controlPoint: try path(PMDService.controlPointUUID), data: try path(PMDService.dataUUID),
                    measurement: try path("00002a37-0000-1000-8000-00805f9b34fb"))
                try await body(Rig(simulator: simulator, client: client, paths: paths, log: log), &iterator)
            }
        }
    }

    /// The next `Value` of `path` (a notification, an indication or a read).
    static func nextValue(
        _ iterator: inout Iterator, at path: ObjectPath, timeout: Duration = .seconds(10)
    ) async -> [UInt8]? {
        let found = await SimulatorBehaviourTests.next(&iterator, timeout: timeout) {
            SimulatorBehaviourTests.changed($0, path, "Value") != nil
        }
        guard let event = found.found,
            case .bytes(let bytes)? = SimulatorBehaviourTests.changed(event, path, "Value")
        else { return nil }
        return bytes
    }

    /// The next command response indicated on the control point (feature reads skipped).
    static func nextResponse(_ iterator: inout Iterator, _ rig: Rig) async throws -> PMDResponse {
        while true {
            let value = try #require(
                await nextValue(&iterator, at: rig.paths.controlPoint), "a response came")
            if value.first == PMDResponse.marker { return try PMDResponse(decoding: value[...]) }
        }
    }

    /// The simulator's log entries, in order.
    static func entries(_ log: String) throws -> [[String: Any]] {
        try HostileGATTTests.entries(log)
    }

    /// Waits for a log entry satisfying `predicate` (the deadline only proves "not hung").
    static func waitForEntry(_ log: String, where predicate: ([String: Any]) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try entries(log).contains(where: predicate) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// The D-Bus error `body` failed with (nil when it succeeded).
    static func failure(_ body: () async throws -> Void) async -> DBusError? {
        do {
            try await body()
            return nil
        } catch let error as DBusError {
            return error
        } catch {
            Issue.record("not a D-Bus error: \(error)")
            return nil
        }
    }

    // MARK: - The GATT objects

    @Test func theH10ProfileOffersThePMDService() async throws {
        try await Self.withH10(Self.scenario()) { rig, _ in
            let objects = try await rig.client.managedObjects(destination: "org.bluez")
            let device = try #require(objects[Self.device]?[Self.deviceInterface.rawValue])
            #expect(device["Name"] == .string("Polar H10 1A1A2B3C"))
            #expect(device["Paired"] == .boolean(false))
            let controlPoint = try #require(objects[rig.paths.controlPoint]?[Self.characteristic.rawValue])
            #expect(controlPoint["Flags"] == .strings(["read", "write", "indicate"]))
            #expect(controlPoint["MTU"] == .uint16(232))
            #expect(
                controlPoint["NotifyAcquired"] == nil,
                "only a characteristic that notifies offers AcquireNotify")
            let data = try #require(objects[rig.paths.data]?[Self.characteristic.rawValue])
            #expect(data["Flags"] == .strings(["notify"]))
            #expect(data["NotifyAcquired"] == .boolean(false))
            #expect(objects[try rig.paths.controlPoint.appending("desc002c")] != nil, "the CCC descriptor")
            let service = try #require(rig.paths.controlPoint.parent)
            #expect(objects[service]?["org.bluez.GattService1"]?["UUID"] == .string(PMDService.serviceUUID))
            let acquire = await Self.failure {
                _ = try await rig.call(
                    rig.paths.controlPoint, Self.characteristic, "AcquireNotify", [.propertyMap([:])])
            }
            #expect(acquire?.name.rawValue == "org.bluez.Error.NotSupported")
        }
    }

    // MARK: - Before pairing

    /// Unpaired: a write is never answered (the caller's timeout ends it, and the simulator lets
    /// it go when the link goes), a read fails at once with NotPermitted "Not paired".
    @Test func unpairedWriteIsNeverAnsweredAndReadIsRefused() async throws {
        try await Self.withH10(Self.scenario()) { rig, _ in
            try await rig.subscribe()
            let write = await Self.failure {
                try await rig.write(PMDCommand.getSettings(.ecg).bytes, timeout: .milliseconds(300))
            }
            #expect(write?.code == .noReply)
            let read = await Self.failure {
                _ = try await rig.call(
                    rig.paths.controlPoint, Self.characteristic, "ReadValue", [.propertyMap([:])])
            }
            #expect(read?.name.rawValue == "org.bluez.Error.NotPermitted")
            #expect(read?.message == "Not paired")
            #expect(try Self.entries(rig.log).contains { $0["event"] as? String == "pmd-unanswered" })
            _ = try await rig.call(Self.device, Self.deviceInterface, "Disconnect")
            #expect(
                try await Self.waitForEntry(rig.log) { $0["event"] as? String == "pmd-unanswered-ended" },
                "the unanswered write is let go when the link goes")
        }
    }

    // MARK: - Pairing

    @Test func pairingNeedsAnAgentAndIsKept() async throws {
        try await Self.withH10(Self.scenario()) { rig, iterator in
            let without = await Self.failure { try await rig.pair() }
            #expect(without?.name.rawValue == "org.bluez.Error.AuthenticationFailed")
            #expect(without?.message == "Authentication Failed")

            let badCapability = await Self.failure { try await rig.registerAgent("Telepathy") }
            #expect(badCapability?.name.rawValue == "org.bluez.Error.InvalidArguments")
            try await rig.registerAgent()
            let twice = await Self.failure { try await rig.registerAgent() }
            #expect(twice?.name.rawValue == "org.bluez.Error.AlreadyExists")
            let wrongPath = await Self.failure {
                _ = try await rig.call(
                    "/org/bluez", Self.agentManager, "RequestDefaultAgent", [.objectPath("/not/mine")])
            }
            #expect(wrongPath?.name.rawValue == "org.bluez.Error.DoesNotExist")
            _ = try await rig.call(
                "/org/bluez", Self.agentManager, "RequestDefaultAgent", [.objectPath(Self.agent)])

            try await rig.pair()
            let paired = await SimulatorBehaviourTests.next(&iterator) {
                SimulatorBehaviourTests.changed($0, Self.device, "Paired") == .boolean(true)
            }
            guard case .propertiesChanged(let change)? = paired.found else {
                Issue.record("no Paired: true")
                return
            }
            #expect(change.changed["Bonded"] == .boolean(true), "an H10 bonds")
            let again = await Self.failure { try await rig.pair() }
            #expect(again?.name.rawValue == "org.bluez.Error.AlreadyExists")
            #expect(again?.message == "Already Exists")

            try await rig.client.setProperty(
                "Trusted", to: .boolean(true), interface: Self.deviceInterface, path: Self.device,
                destination: "org.bluez")
            let trusted = await SimulatorBehaviourTests.next(&iterator) {
                SimulatorBehaviourTests.changed($0, Self.device, "Trusted") == .boolean(true)
            }
            #expect(trusted.found != nil)

            _ = try await rig.call(
                "/org/bluez", Self.agentManager, "UnregisterAgent", [.objectPath(Self.agent)])
            let gone = await Self.failure {
                _ = try await rig.call(
                    "/org/bluez", Self.agentManager, "UnregisterAgent", [.objectPath(Self.agent)])
            }
            #expect(gone?.name.rawValue == "org.bluez.Error.DoesNotExist")

            // Paired and Trusted outlive the link.
            _ = try await rig.call(Self.device, Self.deviceInterface, "Disconnect")
            _ = try await rig.call(Self.device, Self.deviceInterface, "Connect")
            let objects = try await rig.client.managedObjects(destination: "org.bluez")
            #expect(objects[Self.device]?[Self.deviceInterface.rawValue]?["Paired"] == .boolean(true))
            #expect(objects[Self.device]?[Self.deviceInterface.rawValue]?["Trusted"] == .boolean(true))
        }
        // RemoveDevice un-pairs: checked on a fresh simulator below.
    }

    @Test func removeDeviceUnpairs() async throws {
        try await Self.withH10(Self.scenario { $0.paired = true }) { rig, iterator in
            _ = try await rig.call(
                "/org/bluez/hci0", "org.bluez.Adapter1", "RemoveDevice", [.objectPath(Self.device)])
            _ = try await rig.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            let found = await SimulatorBehaviourTests.next(&iterator) {
                if case .interfacesAdded(let path, let interfaces) = $0 {
                    path == Self.device && interfaces[Self.deviceInterface.rawValue] != nil
                } else {
                    false
                }
            }
            guard case .interfacesAdded(_, let interfaces)? = found.found else {
                Issue.record("the H10 was found again")
                return
            }
            #expect(interfaces[Self.deviceInterface.rawValue]?["Paired"] == .boolean(false))
            #expect(interfaces[Self.deviceInterface.rawValue]?["Bonded"] == .boolean(false))
        }
    }

    @Test(arguments: [
        ("refuse", "org.bluez.Error.AuthenticationFailed", "Authentication Failed"),
        ("reject", "org.bluez.Error.AuthenticationRejected", "Authentication Rejected"),
        ("timeout", "org.bluez.Error.AuthenticationTimeout", "Authentication Timeout"),
    ])
    func aStrapThatDoesNotPair(pairing: String, error: String, message: String) async throws {
        try await Self.withH10(
            Self.scenario { $0.pairing = pairing }, adjustTiming: { $0.pairingTimeout = 0.3 }
        ) { rig, _ in
            try await rig.registerAgent()
            let failed = await Self.failure { try await rig.pair() }
            #expect(failed?.name.rawValue == error)
            #expect(failed?.message == message)
            let objects = try await rig.client.managedObjects(destination: "org.bluez")
            #expect(objects[Self.device]?[Self.deviceInterface.rawValue]?["Paired"] == .boolean(false))
            let read = await Self.failure {
                _ = try await rig.call(
                    rig.paths.controlPoint, Self.characteristic, "ReadValue", [.propertyMap([:])])
            }
            #expect(read?.message == "Not paired")
        }
    }

    @Test func cancelPairingEndsAPairingUnderWay() async throws {
        try await Self.withH10(Self.scenario { $0.pairing = "timeout" }) { rig, _ in
            try await rig.registerAgent()
            let idle = await Self.failure {
                _ = try await rig.call(Self.device, Self.deviceInterface, "CancelPairing")
            }
            #expect(idle?.name.rawValue == "org.bluez.Error.DoesNotExist")
            async let pairing = Self.failure { try await rig.pair() }
            #expect(try await Self.waitForEntry(rig.log) { $0["event"] as? String == "pairing" })
            _ = try await rig.call(Self.device, Self.deviceInterface, "CancelPairing")
            #expect(await pairing?.name.rawValue == "org.bluez.Error.AuthenticationCanceled")
        }
    }

    // MARK: - After pairing

    @Test func featuresAndSettingsOncePaired() async throws {
        try await Self.withH10(Self.scenario { $0.paired = true }) { rig, iterator in
            try await rig.subscribe()
            let read = try await rig.call(
                rig.paths.controlPoint, Self.characteristic, "ReadValue", [.propertyMap([:])])
            guard case .bytes(let features)? = read.body.first else {
                Issue.record("ReadValue returned no bytes")
                return
            }
            let offered = try PMDFeatures(decoding: features[...])
            #expect(offered.types == [.ecg, .acc])
            #expect(
                await Self.nextValue(&iterator, at: rig.paths.controlPoint) == features,
                "a read is a Value change too")

            try await rig.write(PMDCommand.getSettings(.ecg).bytes)
            let ecg = try await Self.nextResponse(&iterator, rig)
            #expect(ecg.op == .getMeasurementSettings && ecg.status == .success)
            #expect(try ecg.settings().values == [.sampleRate: [130], .resolution: [14]])

            try await rig.write(PMDCommand.getSettings(.acc).bytes)
            let acc = try await Self.nextResponse(&iterator, rig)
            #expect(
                try acc.settings().values == [
                    .sampleRate: [25, 50, 100, 200], .resolution: [16], .range: [2, 4, 8],
                ])

            try await rig.write(PMDCommand.getSettings(.ppg).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .invalidMeasurementType)

            // The write's reply goes out before the response it causes.
            let events = try Self.entries(rig.log).compactMap { entry -> String? in
                guard let event = entry["event"] as? String else { return nil }
                if event == "reply", entry["member"] as? String == "WriteValue" { return "reply" }
                return event == "pmd-command" ? event : nil
            }
            #expect(events == ["reply", "pmd-command", "reply", "pmd-command", "reply", "pmd-command"])
        }
    }

    @Test func startsThatAreRefused() async throws {
        try await Self.withH10(Self.scenario { $0.paired = true }) { rig, iterator in
            try await rig.subscribe()
            try await rig.write(try PMDCommand.start(.acc, .h10ACC(rate: 60, rangeG: 8)).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .invalidSampleRate)
            try await rig.write(try PMDCommand.start(.acc, .h10ACC(rate: 50, rangeG: 16)).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .invalidRange)
            try await rig.write(
                try PMDCommand.start(.ecg, PMDSelectedSettings([.sampleRate: 130, .range: 2])).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .invalidParameter)
            try await rig.write(PMDCommand.stop(.ecg).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .alreadyInState)
            try await rig.write([0x07, 0x00])
            #expect(try await Self.nextResponse(&iterator, rig).status == .invalidOpCode)
            try await rig.write(try PMDCommand.start(.ecg, .h10ECG).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .success)
            try await rig.write(try PMDCommand.start(.ecg, .h10ECG).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .alreadyInState)
        }
    }

    /// ECG frames: 73 samples of type 0, 73/130 s apart on the sensor's clock (2019 after a
    /// battery change), and the R peaks found in them are the beats the strap reports on 0x2A37.
    @Test func ecgFramesCarryTheStrapsBeats() async throws {
        try await Self.withH10(Self.scenario { $0.paired = true }) { rig, iterator in
            try await rig.subscribe()
            _ = try await rig.call(rig.paths.measurement, Self.characteristic, "StartNotify")
            try await rig.write(try PMDCommand.start(.ecg, .h10ECG).bytes)
            var decoder = PMDDecoder()
            decoder.started(.ecg, selected: .h10ECG)
            var detector = RPeakDetector(sampleRate: 130)
            var peaks: [RPeak] = []
            var strapRR: [Double] = []
            var timestamps: [UInt64] = []
            var responded = false
            while timestamps.count < 18 {
                let found = await SimulatorBehaviourTests.next(&iterator) {
                    if case .propertiesChanged(let change) = $0 {
                        change.changed["Value"] != nil
                            && [rig.paths.data, rig.paths.measurement, rig.paths.controlPoint].contains(
                                change.path)
                    } else {
                        false
                    }
                }
                guard case .propertiesChanged(let change)? = found.found,
                    case .bytes(let value)? = change.changed["Value"]
                else {
                    Issue.record("the streams stopped")
                    return
                }
                if change.path == rig.paths.controlPoint {
                    let response = try PMDResponse(decoding: value[...])
                    #expect(response.status == .success && response.op == .requestMeasurementStart)
                    responded = true
                } else if change.path == rig.paths.measurement {
                    let measurement = try HeartRateMeasurement(decoding: value)
                    strapRR += measurement.rrIntervals.map(\.milliseconds)
                } else {
                    #expect(responded, "the start's response comes before the first frame")
                    let decoded = try decoder.decode(value[...])
                    guard case .ecg(let samples) = decoded.data else {
                        Issue.record("a frame that is not ECG")
                        return
                    }
                    #expect(samples.count == 73)
                    #expect(decoded.frame.frameType == 0 && !decoded.frame.isCompressed)
                    timestamps.append(decoded.frame.timestamp)
                    for sample in samples {
                        if let peak = detector.process(
                            Double(sample.microvolts), time: Int64(sample.timestamp))
                        {
                            peaks.append(peak)
                        }
                    }
                }
            }
            peaks += detector.finish()
            // The strap reports a beat in its next notification after the beat: a few more of
            // them (the frames may have come in a burst on a loaded machine) cover the ECG's last.
            let wanted = strapRR.count + 4
            while strapRR.count < wanted {
                let value = try #require(await Self.nextValue(&iterator, at: rig.paths.measurement))
                strapRR += try HeartRateMeasurement(decoding: value).rrIntervals.map(\.milliseconds)
            }
            #expect(timestamps.first.map(PMDTime.isUnsetH10Clock) == true)
            let steps = zip(timestamps.dropFirst(), timestamps).map { Int64($0) - Int64($1) }
            #expect(steps.allSatisfy { abs($0 - 561_538_461) <= 1 }, "frames 73/130 s apart: \(steps)")

            // The ECG's RR intervals appear, in order, among the strap's.
            let ecgRR = peaks.compactMap(\.rrMilliseconds)
            try #require(ecgRR.count >= 6, "beats found in the ECG: \(ecgRR)")
            let tolerance = 2 * 1000 / 130.0 + 1
            let match = strapRR.indices.first { offset in
                offset + ecgRR.count <= strapRR.count
                    && zip(ecgRR, strapRR[offset...]).allSatisfy { abs($0 - $1) <= tolerance }
            }
            #expect(match != nil, "ECG RR \(ecgRR) within strap RR \(strapRR)")
        }
    }

    /// Acceleration at 50 Hz and ±8 g: frames of 36 samples 36/50 s apart, gravity on x; stop
    /// stops them while the ECG goes on.
    @Test func accelerationAtFiftyHertzAndStop() async throws {
        try await Self.withH10(Self.scenario { $0.paired = true }) { rig, iterator in
            try await rig.subscribe()
            try await rig.write(try PMDCommand.start(.acc, .h10ACC(rate: 50, rangeG: 8)).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .success)
            var decoder = PMDDecoder()
            decoder.started(.acc, selected: .h10ACC(rate: 50, rangeG: 8))
            var timestamps: [UInt64] = []
            while timestamps.count < 2 {
                let value = try #require(await Self.nextValue(&iterator, at: rig.paths.data))
                let decoded = try decoder.decode(value[...])
                guard case .acc(let samples) = decoded.data else {
                    Issue.record("a frame that is not acceleration")
                    return
                }
                #expect(samples.count == 36)
                #expect(decoded.frame.frameType == 1 && !decoded.frame.isCompressed)
                #expect(
                    samples.allSatisfy { abs($0.x + 980) < 200 && abs($0.y) < 200 && abs($0.z - 150) < 300 })
                timestamps.append(decoded.frame.timestamp)
            }
            #expect(timestamps[1] - timestamps[0] == 720_000_000)

            try await rig.write(try PMDCommand.start(.ecg, .h10ECG).bytes)
            try await rig.write(PMDCommand.stop(.acc).bytes)
            // Responses: the ECG's start, then the stop.
            var stopped = false
            var ecgFramesAfterStop = 0
            while ecgFramesAfterStop < 3 {
                let found = await SimulatorBehaviourTests.next(&iterator) {
                    if case .propertiesChanged(let change) = $0 {
                        change.changed["Value"] != nil
                            && [rig.paths.data, rig.paths.controlPoint].contains(change.path)
                    } else {
                        false
                    }
                }
                guard case .propertiesChanged(let change)? = found.found,
                    case .bytes(let value)? = change.changed["Value"]
                else {
                    Issue.record("the ECG stopped too")
                    return
                }
                if change.path == rig.paths.controlPoint {
                    let response = try PMDResponse(decoding: value[...])
                    #expect(response.status == .success)
                    if response.op == .stopMeasurement { stopped = true }
                } else if stopped {
                    let frame = try PMDDataFrame(decoding: value[...])
                    #expect(frame.type == .ecg, "no acceleration after the stop")
                    if frame.type == .ecg { ecgFramesAfterStop += 1 }
                }
            }
            #expect(
                try Self.entries(rig.log).contains {
                    $0["event"] as? String == "pmd-stop" && $0["reason"] as? String == "command"
                })
        }
    }

    @Test func compressedAcceleration() async throws {
        try await Self.withH10(
            Self.scenario {
                $0.paired = true
                $0.pmd?.accCompressed = true
            }
        ) { rig, iterator in
            try await rig.subscribe()
            try await rig.write(try PMDCommand.start(.acc, .h10ACC(rate: 200, rangeG: 2)).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .success)
            var decoder = PMDDecoder()
            decoder.started(.acc, selected: .h10ACC(rate: 200, rangeG: 2))
            for _ in 0..<3 {
                let value = try #require(await Self.nextValue(&iterator, at: rig.paths.data))
                let decoded = try decoder.decode(value[...])
                #expect(decoded.frame.isCompressed && decoded.frame.frameType == 1)
                guard case .acc(let samples) = decoded.data else {
                    Issue.record("a frame that is not acceleration")
                    return
                }
                #expect(samples.count == 36)
                #expect(samples.allSatisfy { abs($0.x + 980) < 200 && abs($0.z - 150) < 300 })
                #expect(value.count < 36 * 6 + 10, "compressed frames are smaller than raw ones")
            }
        }
    }

    /// A drop mid-stream stops the streams: after reconnecting, a start is accepted again (not
    /// "already in state") and frames flow again.
    @Test func aDropStopsTheStreams() async throws {
        try await Self.withH10(Self.scenario { $0.paired = true }) { rig, iterator in
            try await rig.subscribe()
            try await rig.write(try PMDCommand.start(.ecg, .h10ECG).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .success)
            #expect(await Self.nextValue(&iterator, at: rig.paths.data) != nil)
            await rig.simulator.dropLink(address: Self.address, for: 0.3)
            let down = await SimulatorBehaviourTests.next(&iterator) {
                SimulatorBehaviourTests.changed($0, Self.device, "Connected") == .boolean(false)
            }
            #expect(down.found != nil)
            #expect(
                try Self.entries(rig.log).contains {
                    $0["event"] as? String == "pmd-stop" && $0["reason"] as? String == "link"
                })
            _ = try await rig.call(Self.device, Self.deviceInterface, "Connect")
            let resolved = await SimulatorBehaviourTests.next(&iterator) {
                SimulatorBehaviourTests.changed($0, Self.device, "ServicesResolved") == .boolean(true)
            }
            #expect(resolved.found != nil)
            try await rig.write(try PMDCommand.start(.ecg, .h10ECG).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .success, "the stream had stopped")
            let frame = try #require(await Self.nextValue(&iterator, at: rig.paths.data))
            #expect(try PMDDataFrame(decoding: frame[...]).type == .ecg)
        }
    }

    // MARK: - More of the profile

    /// Pair() of a strap not connected connects it first, as 5.66 connects LE before pairing.
    @Test func pairingAnUnconnectedStrapConnectsIt() async throws {
        let log = Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: log) }
        try await withSimulator(Self.scenario(), log: log) { _, bus in
            try await withClient(on: bus) { client in
                _ = try await client.call(
                    destination: "org.bluez", path: "/org/bluez", interface: Self.agentManager,
                    member: "RegisterAgent", body: [.objectPath(Self.agent), .string("NoInputNoOutput")])
                _ = try await client.call(
                    destination: "org.bluez", path: Self.device, interface: Self.deviceInterface,
                    member: "Pair",
                    timeout: .seconds(10))
                let objects = try await client.managedObjects(destination: "org.bluez")
                let device = objects[Self.device]?[Self.deviceInterface.rawValue]
                #expect(device?["Connected"] == .boolean(true))
                #expect(device?["Paired"] == .boolean(true))
                #expect(device?["Bonded"] == .boolean(true))
            }
        }
        let events = try Self.entries(log).compactMap { $0["event"] as? String }
        #expect(events.contains("agent-registered") && events.contains("paired"))
    }

    /// AcquireNotify on the data characteristic: frames come through the socket too.
    @Test func framesThroughAnAcquiredSocket() async throws {
        try await Self.withH10(Self.scenario { $0.paired = true }) { rig, iterator in
            _ = try await rig.call(rig.paths.controlPoint, Self.characteristic, "StartNotify")
            let (fd, mtu) = try await rig.call(
                rig.paths.data, Self.characteristic, "AcquireNotify", [.propertyMap([:])]
            )
            .decode(UnixFD.self, UInt16.self)
            defer { fd.close() }
            #expect(mtu == 232)
            let descriptor = try #require(fd.descriptor)
            try await rig.write(try PMDCommand.start(.ecg, .h10ECG).bytes)
            #expect(try await Self.nextResponse(&iterator, rig).status == .success)
            #expect(await readable(descriptor, within: .seconds(10)), "a frame came")
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            #expect(count == 10 + 73 * 3, "one notification of 73 samples fills the H10's MTU")
            let frame = try PMDDataFrame(decoding: buffer.prefix(max(count, 0)))
            #expect(frame.type == .ecg)
        }
    }

    @Test func theNewScenarioKeysAreChecked() throws {
        var scenario = Self.scenario {
            $0.profile = "garmin-hrm"
            $0.pairing = "maybe"
            $0.pmd?.ecgNoise = -1
            $0.mtu = 23
        }
        scenario.devices[0].pmd?.ecgAmplitude = .nan
        do {
            try scenario.validate()
            Issue.record("validation passed")
        } catch {
            for expected in [
                "devices[0].profile: 'garmin-hrm' is not polar-h10",
                "devices[0].pairing: 'maybe' is not just-works, refuse, reject, timeout",
                "devices[0].pmd.ecgNoise", "devices[0].pmd.ecgAmplitude",
                "devices[0].mtu: a PMD frame needs an MTU of 33 or more",
            ] {
                #expect(error.description.contains(expected), "\(expected) in \(error)")
            }
        }
        let json =
            #"{"devices":[{"address":"A0:9E:1A:00:00:01","profile":"polar-h10","name":"Mine","mtu":100}]}"#
        let decoded = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        #expect(decoded.devices.first?.name == "Mine", "the scenario's own values stay")
        #expect(decoded.devices.first?.mtu == 100)
        #expect(decoded.devices.first?.pmd == Scenario.PMD())
    }
}
