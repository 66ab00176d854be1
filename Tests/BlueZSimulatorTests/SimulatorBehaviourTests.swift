import BlueZSimulator
import DBus
import Foundation
import HeartRate
import Testing

/// hrm-sim as a BlueZ client sees it, through our own D-Bus client: shapes and orderings that
/// real bluetoothd 5.66 shows (shared/design/BLUEZ-NOTES.md).
@Suite(.timeLimit(.minutes(1))) struct SimulatorBehaviourTests {
    static let device: ObjectPath = "/org/bluez/hci0/dev_D2_4B_7E_10_20_30"
    /// Handles depend on the services before Heart Rate: the basic strap's Device Information
    /// service has five characteristics, so Heart Rate starts at 0x001d.
    static let measurement: ObjectPath = "/org/bluez/hci0/dev_D2_4B_7E_10_20_30/service001d/char001e"
    static let location: ObjectPath = "/org/bluez/hci0/dev_D2_4B_7E_10_20_30/service001d/char0021"
    static let controlPoint: ObjectPath = "/org/bluez/hci0/dev_D2_4B_7E_10_20_30/service001d/char0023"

    /// The simulator serving a scenario on a private bus, and a client connection to it.
    struct Rig: Sendable {
        let simulator: Simulator
        let client: Connection

        func call(_ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ body: [Value] = [])
            async throws(DBusError) -> Message
        {
            try await client.call(
                destination: "org.bluez", path: path, interface: interface, member: member, body: body,
                timeout: .seconds(10))
        }
    }

    /// Runs `body` with a rig serving the shipped scenario `name` (notifications every 0.1 s,
    /// short disconnects), changed by `adjust`; everything is closed when this returns, also
    /// when `body` throws.
    static func withRig(
        scenario name: String, adjust: (inout Scenario) throws -> Void = { _ in },
        log: String? = ProcessInfo.processInfo.environment["RIG_LOG"], _ body: (Rig) async throws -> Void
    ) async throws {
        var timing = Simulator.Timing()
        timing.disconnect = 0.2
        timing.servicesResolved = 0.05
        var scenario = try ScenarioCatalog.load(name)
        scenario.devices = scenario.devices.map { device in
            var d = device
            d.heartRate.interval = 0.1
            return d
        }
        try adjust(&scenario)
        try await withSimulator(
            scenario, timing: timing, log: log
        ) { simulator, bus in
            try await withClient(on: bus) { client in
                try await body(Rig(simulator: simulator, client: client))
            }
        }
    }

    /// The next event from `events` satisfying `predicate`, within `timeout`; the events before it are returned too.
    static func next(
        _ iterator: inout AsyncStream<Sequenced<ObjectEvent>>.Iterator, timeout: Duration = .seconds(5),
        where predicate: (ObjectEvent) -> Bool
    ) async -> (found: ObjectEvent?, before: [ObjectEvent]) {
        var before: [ObjectEvent] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let event = await iterator.next()?.element else { break }
            if predicate(event) { return (event, before) }
            before.append(event)
        }
        return (nil, before)
    }

    static func changed(_ event: ObjectEvent, _ path: ObjectPath, _ key: String) -> Value? {
        if case .propertiesChanged(let change) = event, change.path == path { return change.changed[key] }
        return nil
    }

    @Test(arguments: [Scenario.ServicesResolvedOrder.afterObjects, .beforeObjects])
    func discoveryConnectReadNotifyDisconnect(order: Scenario.ServicesResolvedOrder) async throws {
        try await Self.withRig(scenario: "basic", adjust: { $0.servicesResolved = order }) { rig in
            try await Self.discoveryConnectReadNotifyDisconnect(rig, order: order)
        }
    }

    static func discoveryConnectReadNotifyDisconnect(_ rig: Rig, order: Scenario.ServicesResolvedOrder)
        async throws
    {
        let events = try await rig.client.objectEvents(sender: "org.bluez", pathNamespace: "/org/bluez")
        var iterator = events.makeAsyncIterator()

        let objects = try await rig.client.managedObjects(destination: "org.bluez")
        #expect(objects["/org/bluez/hci0"]?["org.bluez.Adapter1"]?["Powered"] == .boolean(true))
        #expect(objects[Self.device] == nil, "an unknown strap appears only while discovering")

        let filter = Value.propertyMap([
            "UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb"]), "Transport": .string("le"),
            "DuplicateData": .boolean(true),
        ])
        _ = try await rig.call("/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", [filter])
        _ = try await rig.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let found = await Self.next(&iterator) {
            if case .interfacesAdded(let path, _) = $0 { path == Self.device } else { false }
        }
        guard case .interfacesAdded(_, let interfaces)? = found.found else {
            Issue.record("no InterfacesAdded for the strap")
            return
        }
        let properties = interfaces["org.bluez.Device1"] ?? [:]
        #expect(properties["RSSI"] == .int16(-58))
        #expect(properties["Name"] == .string("Polar H10 7E102030"))
        #expect(properties["Adapter"] == .objectPath("/org/bluez/hci0"))
        #expect(properties["Connected"] == .boolean(false))

        _ = try await rig.call("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
        let invalidated = await Self.next(&iterator) {
            if case .propertiesChanged(let c) = $0 {
                c.path == Self.device && c.invalidated.contains("RSSI")
            } else {
                false
            }
        }
        #expect(invalidated.found != nil, "RSSI is invalidated when discovery stops")

        // Connect: Connected goes out before the reply (signals and replies arrive in the order
        // sent, so it is already queued when the call returns), then the GATT objects and
        // {UUIDs, ServicesResolved} in the scenario's order.
        _ = try await rig.call(Self.device, "org.bluez.Device1", "Connect")
        let connected = await Self.next(&iterator, timeout: .milliseconds(50)) {
            Self.changed($0, Self.device, "Connected") == .boolean(true)
        }
        #expect(connected.found != nil, "Connected: true before Connect's reply")
        let isMeasurement: (ObjectEvent) -> Bool = {
            if case .interfacesAdded(let path, _) = $0 { path == Self.measurement } else { false }
        }
        let isResolved: (ObjectEvent) -> Bool = {
            Self.changed($0, Self.device, "ServicesResolved") == .boolean(true)
        }
        let first = await Self.next(&iterator) { isMeasurement($0) || isResolved($0) }
        let second = await Self.next(&iterator) {
            first.found.map(isMeasurement) == true ? isResolved($0) : isMeasurement($0)
        }
        let gatt = [first.found, second.found].compactMap { $0 }.first(where: isMeasurement)
        #expect(first.found.map(order == .afterObjects ? isMeasurement : isResolved) == true)
        #expect(second.found.map(order == .afterObjects ? isResolved : isMeasurement) == true)
        guard case .interfacesAdded(_, let gattInterfaces)? = gatt else {
            Issue.record("no GATT objects after Connect")
            return
        }
        #expect(
            gattInterfaces["org.bluez.GattCharacteristic1"]?["UUID"]
                == .string("00002a37-0000-1000-8000-00805f9b34fb"))
        #expect(gattInterfaces["org.bluez.GattCharacteristic1"]?["Flags"] == .strings(["notify"]))
        // Objects appear one signal at a time: wait for the last one this test uses.
        let isControlPoint: (ObjectEvent) -> Bool = {
            if case .interfacesAdded(let path, _) = $0 { path == Self.controlPoint } else { false }
        }
        if !second.before.contains(where: isControlPoint) {
            _ = await Self.next(&iterator, where: isControlPoint)
        }

        let locationReply = try await rig.call(
            Self.location, "org.bluez.GattCharacteristic1", "ReadValue", [.emptyMap])
        #expect(locationReply.body == [.bytes([0x01])])

        // StartNotify: Notifying true, then one PropertiesChanged Value per notification.
        _ = try await rig.call(Self.measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        var frames: [[UInt8]] = []
        while frames.count < 3 {
            let value = await Self.next(&iterator) { Self.changed($0, Self.measurement, "Value") != nil }
            guard let event = value.found,
                case .bytes(let bytes)? = Self.changed(event, Self.measurement, "Value")
            else { break }
            frames.append(bytes)
        }
        #expect(frames.count == 3)
        for frame in frames {
            #expect((try? HeartRateMeasurement(decoding: frame))?.sensorContact == .detected)
        }

        // AcquireNotify is refused while a StartNotify session exists.
        await #expect(throws: DBusError.self) {
            _ = try await rig.call(
                Self.measurement, "org.bluez.GattCharacteristic1", "AcquireNotify", [.emptyMap])
        }
        _ = try await rig.call(Self.measurement, "org.bluez.GattCharacteristic1", "StopNotify")
        let acquired = try await rig.call(
            Self.measurement, "org.bluez.GattCharacteristic1", "AcquireNotify", [.emptyMap])
        let (fd, mtu) = try acquired.decode(UnixFD.self, UInt16.self)
        #expect(mtu == 517)
        let descriptor = try #require(fd.descriptor)
        var buffer = [UInt8](repeating: 0, count: 600)
        #expect(await readable(descriptor, within: .seconds(5)))
        let count = read(descriptor, &buffer, buffer.count)
        #expect(count > 1)
        #expect((try? HeartRateMeasurement(decoding: Array(buffer[0..<max(count, 0)]))) != nil)

        // The control point: 01 resets energy expended, anything else is ATT error 0x80.
        _ = try await rig.call(
            Self.controlPoint, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x01]), .emptyMap])
        do {
            _ = try await rig.call(
                Self.controlPoint, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x02]), .emptyMap])
            Issue.record("writing 02 succeeded")
        } catch {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message.contains("0x80"))
        }

        // Disconnect: the acquired socket ends, Connected goes false.
        _ = try await rig.call(Self.device, "org.bluez.Device1", "Disconnect")
        let disconnected = await Self.next(&iterator) {
            Self.changed($0, Self.device, "Connected") == .boolean(false)
        }
        #expect(disconnected.found != nil)
        #expect(await readable(descriptor, within: .seconds(5)))
        var drained = 1
        while drained > 0 { drained = read(descriptor, &buffer, buffer.count) }
        #expect(drained == 0, "end of file on the notify socket")
        fd.close()
    }

    @Test func errorsAsBlueZSendsThem() async throws {
        try await Self.withRig(scenario: "adapter-off") { rig in try await Self.errorsAsBlueZSendsThem(rig) }
    }

    static func errorsAsBlueZSendsThem(_ rig: Rig) async throws {
        do {
            _ = try await rig.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            Issue.record("discovery started on a powered-off adapter")
        } catch {
            #expect(error.name.rawValue == "org.bluez.Error.NotReady")
        }
        do {
            _ = try await rig.call("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
            Issue.record("stopped a discovery never started")
        } catch {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message == "No discovery started")
        }
        // Powering on through Properties.Set, as `bluetoothctl power on` does.
        try await rig.client.setProperty(
            "Powered", to: .boolean(true), interface: "org.bluez.Adapter1", path: "/org/bluez/hci0",
            destination: "org.bluez")
        let powered = try await rig.client.getProperty(
            "Powered", interface: "org.bluez.Adapter1", path: "/org/bluez/hci0", destination: "org.bluez")
        #expect(powered == .boolean(true))
    }

    /// A link drop and a reconnect, with both GATT cache modes: one PropertiesChanged with
    /// {ServicesResolved: false, Connected: false}; with Cache = no the GATT objects go and come
    /// back at the same paths. With Cache = always the StartNotify session is re-enabled by the
    /// simulated bluetoothd; with Cache = no it went with the characteristic object.
    @Test(arguments: [Scenario.GattCache.always, .no])
    func dropAndReconnect(cache: Scenario.GattCache) async throws {
        let adjust: (inout Scenario) throws -> Void = { scenario in
            scenario.gattCache = cache
            try #require(!scenario.devices.isEmpty)
            scenario.devices[0].known = true
        }
        try await Self.withRig(scenario: "basic", adjust: adjust) { rig in
            try await Self.dropAndReconnect(rig, cache: cache)
        }
    }

    static func dropAndReconnect(_ rig: Rig, cache: Scenario.GattCache) async throws {
        let events = try await rig.client.objectEvents(sender: "org.bluez", pathNamespace: "/org/bluez")
        var iterator = events.makeAsyncIterator()
        _ = try await rig.call(Self.device, "org.bluez.Device1", "Connect")
        _ = await Self.next(&iterator) {
            if case .interfacesAdded(let path, _) = $0 { path == Self.controlPoint } else { false }
        }
        _ = try await rig.call(Self.measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        let streaming = await Self.next(&iterator) { Self.changed($0, Self.measurement, "Value") != nil }
        #expect(streaming.found != nil, "it was streaming")
        // The drop, now that the stream runs (a scenario's timed drop could come before it on a
        // loaded machine).
        await rig.simulator.dropLink(address: "D2:4B:7E:10:20:30", for: 0.6)

        let drop = await Self.next(&iterator) {
            Self.changed($0, Self.device, "Connected") == .boolean(false)
        }
        guard case .propertiesChanged(let change)? = drop.found else {
            Issue.record("no drop")
            return
        }
        #expect(change.changed["ServicesResolved"] == .boolean(false), "one signal for both")

        // Reconnect: Connect waits until the strap is reachable again.
        _ = try await rig.call(Self.device, "org.bluez.Device1", "Connect")
        var before: [ObjectEvent] = []
        if cache == .no {
            let back = await Self.next(&iterator) {
                if case .interfacesAdded(let path, _) = $0 { path == Self.controlPoint } else { false }
            }
            before = back.before
            #expect(!back.before.contains { Self.changed($0, Self.measurement, "Value") != nil })
            _ = try await rig.call(Self.measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        }
        let resumed = await Self.next(&iterator) { Self.changed($0, Self.measurement, "Value") != nil }
        before += resumed.before
        #expect(resumed.found != nil, "notifications resume (Cache = always: without a second StartNotify)")
        let removed = before.contains {
            if case .interfacesRemoved(let path, _) = $0 { path == Self.measurement } else { false }
        }
        let added = before.contains {
            if case .interfacesAdded(let path, _) = $0 { path == Self.measurement } else { false }
        }
        #expect(removed == (cache == .no))
        #expect(added == (cache == .no))
        #expect(before.contains { Self.changed($0, Self.measurement, "Notifying") == .boolean(true) })
    }

    /// Adapter power off and on, then bluetoothd restarting (what the scenario's events do,
    /// triggered here when the test is ready, so a loaded machine cannot make it miss them): the
    /// name is lost, then owned again, and the adapter is back in GetManagedObjects.
    @Test func powerCycleAndRestart() async throws {
        try await Self.withRig(scenario: "power-cycle", adjust: { $0.events = [] }) { rig in
            try await Self.powerCycleAndRestart(rig)
        }
    }

    static func powerCycleAndRestart(_ rig: Rig) async throws {
        let adapter: ObjectPath = "/org/bluez/hci0"
        func powered() async throws -> Value {
            try await rig.client.getProperty(
                "Powered", interface: "org.bluez.Adapter1", path: adapter, destination: "org.bluez")
        }
        await rig.simulator.setAdapterPower("hci0", on: false)
        #expect(try await powered() == .boolean(false))
        await rig.simulator.setAdapterPower("hci0", on: true)
        #expect(try await powered() == .boolean(true))

        // The restart: org.bluez has no owner for a while, then has one again (the bus says so
        // with NameOwnerChanged, watched from before the restart).
        let owners = try await rig.client.signals(
            matching: MatchRule(sender: .bus, interface: .bus, member: "NameOwnerChanged", arg0: "org.bluez"))
        async let restarted: Void = rig.simulator.restartBluetoothd(downFor: 0.4)
        var owned: [Bool] = []
        for await message in owners.map(\.element) {
            guard message.body.count == 3, case .string(let newOwner) = message.body[2] else { continue }
            owned.append(!newOwner.isEmpty)
            if owned.count == 2 { break }
        }
        #expect(owned == [false, true], "the name went, then came back")
        await restarted
        let objects = try await rig.client.managedObjects(destination: "org.bluez")
        #expect(objects[adapter] != nil)
    }

    /// The deny-bluez policy: the bus itself refuses calls to org.bluez with AccessDenied.
    @Test func accessDeniedByTheBusPolicy() async throws {
        let scenario = try ScenarioCatalog.load("access-denied")
        try await withSimulator(scenario, policy: .denyBlueZ) { _, bus in
            try await withClient(on: bus) { client in
                do {
                    _ = try await client.managedObjects(destination: "org.bluez")
                    Issue.record("the call went through")
                } catch let error as DBusError {
                    #expect(error.code == .accessDenied)
                }
            }
        }
    }
}

extension Value {
    static var emptyMap: Value { .propertyMap([:]) }
}
