import BlueZSimulator
import Foundation
import HeartRate
import Testing

@Suite struct ScenarioTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func basicScenarioDecodes() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Scenarios/basic.json"))
        let scenario = try JSONDecoder().decode(Scenario.self, from: data)
        #expect(scenario.adapters.map(\.name) == ["hci0"])
        #expect(scenario.gattCache == .always)
        let strap = try #require(scenario.devices.first)
        #expect(strap.name == "Polar H10 7E102030")
        #expect(strap.location == 1)
        #expect(strap.battery == 87)
        #expect(strap.heartRate.mode == .realistic)
        #expect(strap.heartRate.rr)
    }

    @Test func defaultsAndExplicitNulls() throws {
        let json = #"{"devices":[{"address":"AA:BB:CC:DD:EE:FF","location":null,"battery":null}]}"#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        #expect(scenario.adapters == [Scenario.Adapter()])
        let device = try #require(scenario.devices.first)
        #expect(device.location == nil, "null means: no Body Sensor Location characteristic")
        #expect(device.battery == nil)
        #expect(device.uuids == ["180d"])
        #expect(device.heartRate.interval == 1)

        let defaults = try JSONDecoder().decode(
            Scenario.self, from: Data(#"{"devices":[{"address":"AA:BB:CC:DD:EE:FF"}]}"#.utf8))
        #expect(defaults.devices.first?.location == 1)
        #expect(defaults.devices.first?.battery == 90)
    }

    @Test func gattFailureFields() throws {
        let json = #"""
            {"devices":[{"address":"AA:BB:CC:DD:EE:FF","acquireFd":"pipe","valueType":"s",
                         "callFailures":{"AcquireNotify":[{"stall":true}],
                                         "ReadValue":[{"error":"org.bluez.Error.Failed","message":"m"}]}}]}
            """#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        try scenario.validate()
        let device = try #require(scenario.devices.first)
        #expect(device.acquireFd == "pipe")
        #expect(device.valueType == "s")
        #expect(
            device.callFailures == [
                "AcquireNotify": [Scenario.DBusFailure(stall: true)],
                "ReadValue": [Scenario.DBusFailure(error: "org.bluez.Error.Failed", message: "m")],
            ])
        let defaults = Scenario.Device(address: "AA:BB:CC:DD:EE:FF")
        #expect(defaults.acquireFd == "seqpacket")
        #expect(defaults.valueType == "ay")
        #expect(defaults.callFailures.isEmpty)
        let again = try JSONDecoder().decode(Scenario.self, from: JSONEncoder().encode(scenario))
        #expect(again == scenario)
    }

    /// The multi-strap knobs: an adapter's link cap and concurrent-connect rule, a strap's
    /// connect delay, a drop that repeats; their defaults leave a scenario as it was.
    @Test func multiStrapFields() throws {
        let json = #"""
            {"adapters":[{"name":"hci0","maxConnections":2,"concurrentConnects":"refuse"}],
             "devices":[{"address":"AA:BB:CC:DD:EE:FF","connectDelay":0.3,
                         "drops":[{"at":4,"for":1,"every":4},{"afterNotifications":3,"for":1,"every":5}]}]}
            """#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        try scenario.validate()
        let adapter = try #require(scenario.adapters.first)
        #expect(adapter.maxConnections == 2)
        #expect(adapter.concurrentConnects == "refuse")
        let device = try #require(scenario.devices.first)
        #expect(device.connectDelay == 0.3)
        #expect(device.drops.map(\.every) == [4, 5])
        let again = try JSONDecoder().decode(Scenario.self, from: JSONEncoder().encode(scenario))
        #expect(again == scenario)

        let defaults = try JSONDecoder().decode(
            Scenario.self,
            from: Data(#"{"adapters":[{"name":"hci0"}],"devices":[{"address":"AA:BB:CC:DD:EE:FF"}]}"#.utf8))
        #expect(defaults.adapters.first?.maxConnections == nil)
        #expect(defaults.adapters.first?.concurrentConnects == "allow")
        #expect(defaults.devices.first?.connectDelay == nil)
        // A drop without `every` encodes as before (recordings' scenarios print unchanged).
        let once = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Scenario.Drop(at: 1, for: 2)))
        #expect((once as? [String: Any])?.keys.sorted() == ["at", "for"])
    }

    /// The peripheral side's knobs: an adapter's role and advertising slots, and the consumers;
    /// their defaults leave a scenario as it was, and a bad one is said with its path.
    @Test func peripheralFields() throws {
        let json = #"""
            {"adapters":[{"name":"hci0","peripheral":false,"maxAdvertisements":1}],
             "consumers":[{"address":"C0:FF:EE:00:00:01","connectAfter":2,"read":false,"receives":false,
                           "unsubscribeAfter":3,"disconnectAfter":1}]}
            """#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        try scenario.validate()
        #expect(scenario.adapters.first?.peripheral == false)
        #expect(scenario.adapters.first?.maxAdvertisements == 1)
        let consumer = try #require(scenario.consumers.first)
        #expect(consumer.connectAfter == 2 && !consumer.read && consumer.subscribe && !consumer.receives)
        #expect(consumer.unsubscribeAfter == 3 && consumer.disconnectAfter == 1 && consumer.adapter == nil)
        let again = try JSONDecoder().decode(Scenario.self, from: JSONEncoder().encode(scenario))
        #expect(again == scenario)
        let defaults = try JSONDecoder().decode(
            Scenario.self, from: Data(#"{"adapters":[{"name":"hci0"}]}"#.utf8))
        #expect(
            defaults.adapters.first?.peripheral == true && defaults.adapters.first?.maxAdvertisements == 5)
        #expect(defaults.consumers.isEmpty)
        let bad = try JSONDecoder().decode(
            Scenario.self,
            from: Data(#"{"consumers":[{"address":"nope","adapter":"hci9","unsubscribeAfter":0}]}"#.utf8))
        do {
            try bad.validate()
            Issue.record("validation passed")
        } catch {
            #expect(error.description.contains("consumers[0].address"))
            #expect(error.description.contains("consumers[0].adapter"))
            #expect(error.description.contains("consumers[0].unsubscribeAfter"))
        }
    }

    @Test func missingAddressIsAnError() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Scenario.self, from: Data(#"{"devices":[{"name":"x"}]}"#.utf8))
        }
    }
}

@Suite struct ScenarioValidationTests {
    @Test func shippedScenariosAreValid() throws {
        let directory = ScenarioTests.root.appendingPathComponent("Scenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".json")
        }
        #expect(files.contains("basic.json"))
        for file in files {
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            let scenario = try JSONDecoder().decode(Scenario.self, from: data)
            try scenario.validate()
        }
    }

    @Test func everyProblemIsReportedWithItsPath() throws {
        let json = #"""
            {"adapters":[{"name":"hci0","maxConnections":0,"concurrentConnects":"queue"},{"name":"hci0","address":"nope"}],
             "devices":[{"address":"AA:BB:CC:DD:EE:FG","adapter":"hci9","uuids":["18x"],"mtu":5,
                         "heartRate":{"mode":"frames","frames":["0e4"],"format":"uint32","contact":"maybe"},
                         "drops":[{"at":1,"afterNotifications":3,"for":2},{"for":2},{"afterNotifications":0,"for":0}],
                         "connectFailures":[{"stall":true,"error":"org.bluez.Error.Failed"},{"error":"nope"}],
                         "callFailures":{"Frobnicate":[{"stall":true}],"ReadValue":[{"error":"nope"}],
                                         "AcquireNotify":[{"stall":true,"error":"org.bluez.Error.Failed"}]},
                         "acquireFd":"socket","valueType":"q","connectDelay":-1},
                        {"address":"AA:BB:CC:DD:EE:01","drops":[{"at":1,"for":2,"every":2}]}],
             "events":[{"at":1,"type":"bluetoothd-restart","downFor":-1},
                       {"at":2,"type":"battery","device":"x","percent":500},
                       {"at":0.5,"type":"bluetoothd-restart"},{"afterNotifications":0,"type":"bluetoothd-restart"},
                       {"after":-1,"type":"adapter-power","adapter":"hci7","powered":true},
                       {"after":1,"type":"device-appear","device":"C0:FF:EE:00:00:09"}]}
            """#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        do {
            try scenario.validate()
            Issue.record("validation passed")
        } catch {
            let text = error.description
            for expected in [
                "adapters[1].name: 'hci0' appears twice", "adapters[1].address: 'nope'",
                "devices[0].address: 'AA:BB:CC:DD:EE:FG'", "devices[0].adapter: no adapter named 'hci9'",
                "devices[0].uuids[0]", "devices[0].mtu: 5", "devices[0].heartRate.frames[0]",
                "devices[0].heartRate.format", "devices[0].heartRate.contact: 'maybe'",
                "events[0].downFor: 0 to 86400 seconds",
                "events[1].device: no device with address 'x'", "events[1].percent: 0 to 100",
                "events[2].at: before an event listed earlier",
                "events[3].afterNotifications: needs to be 1 or more",
                "events[4].after: negative", "events[4].adapter: no adapter named 'hci7'",
                "events[5].device: no device with address 'C0:FF:EE:00:00:09'",
                "devices[0].drops[0]: needs one of at and afterNotifications",
                "devices[0].drops[1]: needs one of at and afterNotifications",
                "devices[0].drops[2].afterNotifications: needs to be 1 or more",
                "devices[0].drops[2].for: needs to be above 0",
                "devices[0].connectFailures[0]: a stall has no error",
                "devices[0].connectFailures[1].error: 'nope' is not an error name",
                "devices[0].callFailures.Frobnicate: not a GATT call (ReadValue, WriteValue, StartNotify,"
                    + " StopNotify, AcquireNotify)",
                "devices[0].callFailures.ReadValue[0].error: 'nope' is not an error name",
                "devices[0].callFailures.AcquireNotify[0]: a stall has no error",
                "devices[0].acquireFd: 'socket' is not seqpacket, stream, pipe, file, devnull",
                "devices[0].valueType: 'q' is not ay, s, ai",
                "adapters[0].maxConnections: needs to be 1 or more",
                "adapters[0].concurrentConnects: 'queue' is not allow, refuse",
                "devices[0].connectDelay: 0 to 86400 seconds",
                "devices[1].drops[0].every: above 'for'",
            ] {
                #expect(text.contains(expected), "\(expected) in \(text)")
            }
        }
    }

    @Test func generatorFromStream() throws {
        var stream = Scenario.HeartRateStream()
        stream.mode = .series
        stream.values = [300]
        stream.format = "uint16"
        stream.energyStart = 10
        stream.contact = "not_detected"
        var generator = HeartRateGenerator(stream: stream, maximumFrameLength: 20)
        let m = try HeartRateMeasurement(decoding: generator.next(at: 1))
        #expect(m.heartRate == 300)
        #expect(m.energyExpended == 10)
        #expect(m.sensorContact == .notDetected)
    }
}

@Suite struct ScenarioCatalogTests {
    @Test func shippedScenariosLoadByName() throws {
        let names = ScenarioCatalog.names()
        for expected in [
            "basic", "two-straps", "uint16-energy", "drops", "drops-nocache", "malformed", "adapter-off",
            "no-adapter", "no-bluetoothd", "access-denied", "connect-abort", "power-cycle", "lab",
            "three-straps", "link-cap", "busy-connects", "crowd", "polar-h10", "polar-h10-refuses-pairing",
            "polar-h10-paired",
        ] {
            #expect(names.contains(expected), "\(expected) in \(names)")
        }
        for name in names {
            _ = try ScenarioCatalog.load(name)
        }
        #expect(try ScenarioCatalog.load("drops-nocache").gattCache == .no)
        // The H10 profile fills in what the scenarios leave out.
        let h10 = try #require(try ScenarioCatalog.load("polar-h10").devices.first)
        #expect(h10.name == "Polar H10 1A1A2B3C" && h10.mtu == 232 && h10.pmd != nil && !h10.paired)
        #expect(h10.deviceInformation?.model == "H10")
        #expect(try ScenarioCatalog.load("polar-h10-refuses-pairing").devices.first?.pairing == "refuse")
        #expect(try ScenarioCatalog.load("polar-h10-refuses-pairing").devices.first?.pmd != nil)
        #expect(try ScenarioCatalog.load("polar-h10-paired").devices.first?.paired == true)
        #expect(try ScenarioCatalog.load("access-denied").busPolicy == "deny-bluez")
        #expect(try ScenarioCatalog.load("link-cap").adapters.map(\.maxConnections) == [2])
        let busy = try ScenarioCatalog.load("busy-connects")
        #expect(busy.adapters.map(\.concurrentConnects) == ["refuse"])
        #expect(busy.devices.allSatisfy { $0.connectDelay == 0.3 })
        let three = try ScenarioCatalog.load("three-straps")
        #expect(Set(three.devices.map(\.address)).count == 3)
        #expect(Set(three.devices.map(\.heartRate.bpm)).count == 3, "distinct rates")
        #expect(three.devices.flatMap(\.drops).map(\.every) == [4])
        // Every other shipped scenario keeps the defaults: one connect at a time is not refused,
        // no link cap, no connect delay.
        for name in names where !["link-cap", "busy-connects"].contains(name) {
            let scenario = try ScenarioCatalog.load(name)
            #expect(
                scenario.adapters.allSatisfy { $0.maxConnections == nil && $0.concurrentConnects == "allow" })
            #expect(scenario.devices.allSatisfy { $0.connectDelay == nil }, "\(name)")
        }
    }

    @Test func unknownNameListsTheShippedOnes() {
        do {
            _ = try ScenarioCatalog.load("nope")
            Issue.record("loaded")
        } catch {
            #expect("\(error)".contains("no scenario named 'nope'; shipped: "))
            #expect("\(error)".contains("basic"))
        }
    }

    @Test func badFilesSayWhere() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bad-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"devices":[{"address":"AA:BB:CC:DD:EE:FF","rssi":"loud"}]}"#.utf8).write(to: file)
        #expect(throws: ScenarioCatalog.LoadError.self) { try ScenarioCatalog.load(file.path) }
        do { _ = try ScenarioCatalog.load(file.path) } catch {
            #expect("\(error)".contains("devices[0].rssi: expected"), "\(error)")
        }
        #expect(throws: ScenarioCatalog.LoadError.self) { try ScenarioCatalog.load("/nonexistent/x.json") }
    }
}

@Suite struct ScenarioEventTests {
    static func decode(_ json: String) throws -> Scenario {
        try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
    }

    /// The shipped scenarios' events, as the JSON in Scenarios/ says.
    @Test func shippedEventsDecodeToTheirCases() throws {
        #expect(
            try ScenarioCatalog.load("power-cycle").events == [
                .adapterPower(.afterNotifications(5), adapter: "hci0", powered: false),
                .adapterPower(.after(3), adapter: "hci0", powered: true),
                .bluetoothdRestart(.afterNotifications(10), downFor: 2),
            ])
        #expect(
            try ScenarioCatalog.load("basic").events == [
                .battery(.afterNotifications(8), device: "D2:4B:7E:10:20:30", percent: 86)
            ])
    }

    @Test func defaultsOfOptionalFields() throws {
        let scenario = try Self.decode(
            #"{"events":[{"at":1,"type":"bluetoothd-restart"},{"after":0,"type":"adapter-power","powered":true}]}"#
        )
        #expect(
            scenario.events == [
                .bluetoothdRestart(.at(1), downFor: 1), .adapterPower(.after(0), adapter: nil, powered: true),
            ])
    }

    /// Encoding writes the same flat objects back: every shipped scenario's events survive a
    /// round trip.
    @Test func eventsRoundTrip() throws {
        let names = ScenarioCatalog.names()
        #expect(names.contains("power-cycle"))
        for name in names {
            let events = try ScenarioCatalog.load(name).events
            let again = try JSONDecoder().decode([Scenario.Event].self, from: JSONEncoder().encode(events))
            #expect(again == events, "\(name)")
        }
        let event = Scenario.Event.battery(.afterNotifications(3), device: "AA:BB:CC:DD:EE:FF", percent: 5)
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(event)) as? [String: Any]
        #expect(object?["type"] as? String == "battery")
        #expect(object?["afterNotifications"] as? Int == 3)
        #expect(object?["device"] as? String == "AA:BB:CC:DD:EE:FF")
        #expect(object?["percent"] as? Int == 5)
        let appear = Scenario.Event.appear(.afterNotifications(5), device: "AA:BB:CC:DD:EE:FF")
        let appearObject =
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(appear)) as? [String: Any]
        #expect(appearObject?["type"] as? String == "device-appear")
        #expect(appearObject?["device"] as? String == "AA:BB:CC:DD:EE:FF")
        #expect(try JSONDecoder().decode(Scenario.Event.self, from: JSONEncoder().encode(appear)) == appear)
    }

    /// An event the simulator cannot play is refused when the file is read, with its path.
    @Test(arguments: [
        (
            #"{"at":1,"type":"explode"}"#,
            "events[0].type: 'explode' is not adapter-power, bluetoothd-restart, battery or device-appear"
        ),
        (
            #"{"at":1,"after":2,"type":"bluetoothd-restart"}"#,
            "events[0]: needs one of at, afterNotifications and after (2 given)"
        ),
        (
            #"{"type":"bluetoothd-restart"}"#,
            "events[0]: needs one of at, afterNotifications and after (0 given)"
        ),
        (#"{"at":1,"type":"adapter-power","adapter":"hci0"}"#, "events[0].powered: required"),
        (#"{"at":1,"type":"battery","device":"AA:BB:CC:DD:EE:FF"}"#, "events[0].percent: required"),
        (#"{"at":1,"type":"device-appear"}"#, "events[0].device: required"),
        (#"{"at":1}"#, "events[0].type: required"),
    ])
    func unplayableEventsAreDecodingErrors(event: String, expected: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "event-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"events":[\#(event)]}"#.utf8).write(to: file)
        do {
            _ = try ScenarioCatalog.load(file.path)
            Issue.record("loaded \(event)")
        } catch {
            #expect("\(error)".hasSuffix(": \(expected)"), "\(error)")
        }
    }
}

/// Names, addresses and numbers in a scenario come from outside the process: a bad one is a
/// validation error with its path, never a crash (an object path, error name or Duration that
/// cannot be made).
@Suite struct OutsideDataTests {
    static func problems(_ scenario: Scenario) -> String {
        do {
            try scenario.validate()
            return ""
        } catch {
            return error.description
        }
    }

    static func scenario(adapterName: String) -> Scenario {
        var adapter = Scenario.Adapter()
        adapter.name = adapterName
        var scenario = Scenario()
        scenario.adapters = [adapter]
        return scenario
    }

    @Test(arguments: ["hci 0", "hci0/x", "hci٣", "hci", "hci-1", "", "hci0 "])
    func adapterNamesThatCannotBePaths(name: String) {
        let scenario = Self.scenario(adapterName: name)
        #expect(Self.problems(scenario).contains("adapters[0].name: '\(name)' is not like hci0"))
    }

    @Test(arguments: [
        "nope", "org..Failed", "org.bluez.Error.Not Valid", "org.bluez.Error.Failed.", "1org.x",
    ])
    func connectFailureErrorNamesThatAreNotDBusNames(name: String) {
        var scenario = Scenario()
        var device = Scenario.Device(address: "AA:BB:CC:DD:EE:FF")
        device.connectFailures = [Scenario.DBusFailure(error: name, message: "m")]
        scenario.devices = [device]
        #expect(
            Self.problems(scenario).contains(
                "devices[0].connectFailures[0].error: '\(name)' is not an error name"))
    }

    @Test func waitsADurationCannotHold() throws {
        let json = #"""
            {"devices":[{"address":"AA:BB:CC:DD:EE:FF",
                         "heartRate":{"interval":1e300,"variability":1e300,"energyPerMinute":-1}}],
             "events":[{"at":1,"type":"bluetoothd-restart","downFor":1e300}]}
            """#
        let text = Self.problems(try JSONDecoder().decode(Scenario.self, from: Data(json.utf8)))
        for expected in [
            "devices[0].heartRate.interval: above 0 and at most 86400 seconds",
            "devices[0].heartRate.variability: 0 to 100 bpm", "devices[0].heartRate.energyPerMinute",
            "events[0].downFor: 0 to 86400 seconds",
        ] {
            #expect(text.contains(expected), "\(expected) in \(text)")
        }
    }

    /// A scenario built or changed in code reaches the simulator without ScenarioCatalog's
    /// check: start() refuses it with the same problems, before touching the bus.
    @Test func startRefusesAnInvalidScenario() async throws {
        var scenario = Self.scenario(adapterName: "hci 0")
        var device = Scenario.Device(address: "AA:BB:CC:DD:EE:FF")
        device.connectFailures = [Scenario.DBusFailure(error: "not a name")]
        scenario.devices = [device]
        let simulator = Simulator(
            scenario: scenario, busAddress: "unix:path=/nonexistent", log: try SimulatorLog(path: nil))
        do {
            try await simulator.start()
            Issue.record("started")
        } catch let error as ScenarioError {
            #expect(error.description.contains("adapters[0].name: 'hci 0' is not like hci0"))
            #expect(error.description.contains("devices[0].connectFailures[0].error: 'not a name'"))
        }
        await simulator.stop()
    }
}
