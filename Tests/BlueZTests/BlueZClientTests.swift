import BlueZSimulator
import DBus
import Foundation
import Testing

@testable import BlueZ

/// The BlueZ client against hrm-sim on a private bus.
@Suite(.timeLimit(.minutes(1))) struct BlueZClientTests {
    /// The simulator's log as one name per entry: the member for a method call, else the event
    /// (`drop`, `acquire-released`, ...), in order.
    static func logEntries(_ log: String) throws -> [String] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return entry?["event"] as? String == "call"
                ? entry?["member"] as? String : entry?["event"] as? String
        }
    }

    /// Serves `scenario` and connects a client (or returns the error connecting gave).
    /// `log`: where the simulator writes its JSON-lines log, complete when this returns.
    static func withClient(
        _ scenario: String, adjust: (inout Scenario) -> Void = { _ in }, log: String? = nil,
        _ body: (BlueZClient) async throws -> Void
    ) async throws {
        try await withClient(scenario, adjust: adjust, log: log) { client, _ in try await body(client) }
    }

    /// The same, with the simulator at hand to act on it mid-test, and the client's mirror
    /// bounded as `mirror` says.
    static func withClient(
        _ scenario: String, adjust: (inout Scenario) -> Void = { _ in }, log: String? = nil,
        mirror: MirrorOptions = MirrorOptions(), _ body: (BlueZClient, Simulator) async throws -> Void
    ) async throws {
        var loaded = try ScenarioCatalog.load(scenario)
        adjust(&loaded)
        let bus = try PrivateBus(policy: PrivateBus.Policy(rawValue: loaded.busPolicy) ?? .open)
        defer { bus.stop() }
        let simulator = Simulator(scenario: loaded, busAddress: bus.address, log: try SimulatorLog(path: log))
        try await simulator.start()
        let client: BlueZClient
        do {
            client = try await BlueZClient.connect(
                address: bus.address, timeout: .seconds(5), logger: nil, busLogger: nil, mirror: mirror)
        } catch {
            await simulator.stop()
            throw error
        }
        // Cleanup finishes before the test does, whether the body threw or not.
        let failure: (any Error)?
        do {
            try await body(client, simulator)
            failure = nil
        } catch {
            failure = error
        }
        await client.close()
        await simulator.stop()
        if let failure { throw failure }
    }

    static func connectError(_ scenario: String) async throws -> BlueZError? {
        let loaded = try ScenarioCatalog.load(scenario)
        let bus = try PrivateBus(policy: PrivateBus.Policy(rawValue: loaded.busPolicy) ?? .open)
        defer { bus.stop() }
        let simulator = Simulator(scenario: loaded, busAddress: bus.address, log: try SimulatorLog(path: nil))
        try await simulator.start()
        let failure: BlueZError?
        do {
            let client = try await BlueZClient.connect(address: bus.address, timeout: .seconds(5))
            await client.close()
            failure = nil
        } catch {
            failure = error
        }
        await simulator.stop()
        return failure
    }

    @Test func adaptersAndSelection() async throws {
        try await Self.withClient("basic") { client in
            let adapters = await client.adapters()
            #expect(adapters.map(\.name) == ["hci0"])
            #expect(adapters.first?.powered == true)
            #expect(adapters.first?.address == BluetoothAddress("00:AA:01:00:00:00"))
            let chosen = try await client.selectAdapter()
            #expect(chosen.name == "hci0")
            let byAddress = try await client.selectAdapter("00:aa:01:00:00:00")
            #expect(byAddress.name == "hci0")
            await #expect(throws: BlueZError.self) { try await client.selectAdapter("hci9") }
        }
    }

    @Test func twoAdaptersSortedByPath() async throws {
        try await Self.withClient("lab") { client in
            #expect(await client.adapters().map(\.name) == ["hci0", "hci1"])
            let second = try await client.selectAdapter("hci1")
            #expect(second.address == BluetoothAddress("00:AA:01:01:00:01"))
        }
    }

    @Test func poweredOffAdapterCanBePoweredOn() async throws {
        try await Self.withClient("adapter-off") { client in
            let adapter = try await client.selectAdapter()
            #expect(adapter.powered == false, "an unpowered adapter is still chosen, so that hrm can say so")
            let on = try await client.powerOn(adapter)
            #expect(on.powered)
            #expect(await client.adapters().first?.powered == true, "the mirror follows PropertiesChanged")
        }
    }

    /// rfkill: PowerState says so, and bluetoothd refuses a power-on with org.bluez.Error.Blocked;
    /// both are the client's adapterBlocked (the second for a BlueZ that predates PowerState).
    @Test func blockedAdapterIsNotPoweredOn() async throws {
        try await Self.withClient("rfkill") { client in
            let adapter = try await client.selectAdapter()
            #expect(adapter.blocked && !adapter.powered)
            var unaware = adapter
            unaware.blocked = false
            for attempt in [adapter, unaware] {
                do {
                    _ = try await client.powerOn(attempt)
                    Issue.record("a blocked adapter was powered on")
                } catch {
                    #expect((error as? BlueZError)?.code == .adapterBlocked, "\(error)")
                }
            }
        }
    }

    @Test func noAdapter() async throws {
        try await Self.withClient("no-adapter") { client in
            do {
                _ = try await client.selectAdapter()
                Issue.record("an adapter was selected")
            } catch {
                #expect((error as? BlueZError)?.code == .noAdapter)
            }
        }
    }

    @Test func bluetoothdNotRunning() async throws {
        let error = try await Self.connectError("no-bluetoothd")
        #expect(error?.code == .bluetoothdNotRunning)
    }

    @Test func accessDeniedByPolicy() async throws {
        let error = try await Self.connectError("access-denied")
        #expect(error?.code == .accessDenied)
        #expect(error?.message.contains("bluetooth") == true)
    }
}

@Suite struct BlueZErrorTests {
    @Test func mapping() {
        #expect(
            BlueZError(DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")).code
                == .adapterPoweredOff)
        let failed = BlueZError(
            DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        #expect(failed.code == .bluez)
        #expect(failed.dbusName == "org.bluez.Error.Failed")
        #expect(failed.message == "Failed: le-connection-abort-by-local")
        #expect(BlueZError(DBusError(.noReply, "timed out")).code == .timeout)
        #expect(BlueZError(DBusError(.serviceUnknown, "x")).code == .bluetoothdNotRunning)
        #expect(BlueZError(DBusError(.nameHasNoOwner, "x")).code == .bluetoothdNotRunning)
        #expect(BlueZError(DBusError(.accessDenied, "x")).code == .accessDenied)
        #expect(BlueZError(DBusError(.disconnected, "x")).code == .disconnected)
        #expect(BlueZError(DBusError(.unknownObject, "x")).code == .dbus)
    }
}

@Suite struct ObjectMirrorTests {
    @Test func followsSignalsInOrder() {
        let path: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
        var mirror = ObjectMirror()
        mirror.apply(
            .interfacesAdded(
                path: path,
                interfaces: ["org.bluez.Device1": ["RSSI": .int16(-60), "Connected": .boolean(false)]]))
        #expect(mirror.properties(path, "org.bluez.Device1")?["RSSI"] == .int16(-60))
        #expect(mirror.paths(with: "org.bluez.Device1") == [path])
        // PropertiesChanged: changed values and invalidated names.
        mirror.apply(
            .propertiesChanged(
                PropertiesChanged(
                    path: path, interface: "org.bluez.Device1", changed: ["Connected": .boolean(true)],
                    invalidated: ["RSSI"])))
        // A change for an object never added (it raced GetManagedObjects) is ignored.
        mirror.apply(
            .propertiesChanged(
                PropertiesChanged(
                    path: "/org/bluez/hci9", interface: "org.bluez.Adapter1",
                    changed: ["Powered": .boolean(true)], invalidated: [])))
        #expect(mirror.properties("/org/bluez/hci9", "org.bluez.Adapter1") == nil)
        #expect(mirror.properties(path, "org.bluez.Device1")?["Connected"] == .boolean(true))
        #expect(mirror.properties(path, "org.bluez.Device1")?["RSSI"] == nil)
        mirror.apply(.interfacesRemoved(path: path, interfaces: ["org.bluez.Device1"]))
        #expect(mirror.paths(with: "org.bluez.Device1").isEmpty)
    }
}
