import DBus
import Foundation
import Synchronization
import Testing

/// Collects a stream's messages until one with member `End` arrives (or times out).
private func collect(_ stream: AsyncStream<Sequenced<Message>>, timeout: Duration = .seconds(5)) async
    -> [String]
{
    let task = Task {
        var seen: [String] = []
        for await signal in stream {
            let message = signal.element
            let member = message.member?.rawValue ?? "?"
            if member == "End" { break }
            var arg = ""
            if case .string(let s)? = message.body.first { arg = s }
            seen.append("\(message.path?.rawValue ?? "?") \(member) \(arg)")
        }
        return seen
    }
    let timer = Task {
        try await Task.sleep(for: timeout)
        task.cancel()
    }
    let result = await task.value
    timer.cancel()
    return result
}

private func matchRuleCount(_ client: Connection, of name: BusName) async throws -> UInt32 {
    let reply = try await client.call(
        destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Debug.Stats",
        member: "GetConnectionStats", body: [.string(name.rawValue)])
    return try #require(try reply.body[0].propertyMap().decode("MatchRules", as: UInt32.self))
}

@Suite struct SignalTests {
    @Test func matchRulesFilterOnTheBusAndLocally() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let client = try await bus.connect()
            let namespace = try await client.signals(
                matching: [MatchRule(pathNamespace: "/org/a", member: "Ping"), MatchRule(member: "End")])
            let arg0 = try await client.signals(
                matching: [MatchRule(interface: "org.example.Sig", arg0: "x"), MatchRule(member: "End")])
            func emit(_ path: ObjectPath, _ member: MemberName, _ arg: String) throws {
                try emitter.emitSignal(
                    path: path, interface: "org.example.Sig", member: member, body: [.string(arg)])
            }
            try emit("/org/a/b", "Ping", "y")  // namespace only
            try emit("/other", "Pong", "x")  // arg0 only
            try emit("/org/ab", "Ping", "z")  // neither: not below /org/a
            try emit("/org/a", "Ping", "x")  // both
            try emit("/", "End", "")
            #expect(await collect(namespace) == ["/org/a/b Ping y", "/org/a Ping x"])
            #expect(await collect(arg0) == ["/other Pong x", "/org/a Ping x"])
            await client.close()
            await emitter.close()
        }
    }

    @Test func wellKnownSenderIsTracked() async throws {
        try await withBus { bus in
            let owner = try await bus.connect()
            let impostor = try await bus.connect()
            let client = try await bus.connect()
            #expect(try await owner.requestName("org.example.Owner") == .primaryOwner)
            let stream = try await client.signals(
                matching: MatchRule(sender: "org.example.Owner", interface: "org.example.Sig"))
            try impostor.emitSignal(
                path: "/", interface: "org.example.Sig", member: "Ping", body: [.string("fake")])
            try owner.emitSignal(
                path: "/", interface: "org.example.Sig", member: "Ping", body: [.string("real")])
            try owner.emitSignal(path: "/", interface: "org.example.Sig", member: "End")
            #expect(await collect(stream) == ["/ Ping real"])
            await client.close()
            await owner.close()
            await impostor.close()
        }
    }

    @Test func endingAStreamRemovesItsRule() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let client = try await bus.connect()
            let rule = MatchRule(path: "/counted", interface: "org.example.Sig")
            #expect(try await matchRuleCount(client, of: client.uniqueName) == 0)
            var first: AsyncStream<Sequenced<Message>>? = try await client.signals(matching: rule)
            var second: AsyncStream<Sequenced<Message>>? = try await client.signals(matching: rule)
            // Identical rules are added once.
            #expect(try await matchRuleCount(client, of: client.uniqueName) == 1)
            #expect(first != nil)
            first = nil
            // A window for a wrong RemoveMatch to reach the bus: it can only let a bug through
            // (on a slow machine), never fail a correct build.
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await matchRuleCount(client, of: client.uniqueName) == 1)
            // The remaining stream still receives.
            try emitter.emitSignal(
                path: "/counted", interface: "org.example.Sig", member: "Ping", body: [.string("a")])
            try emitter.emitSignal(path: "/counted", interface: "org.example.Sig", member: "End")
            #expect(await collect(try #require(second)) == ["/counted Ping a"])
            // Dropping the last stream removes the rule from the bus.
            second = nil
            // Polled until gone (a generous deadline only proves "not hung").
            var count: UInt32 = 1
            let deadline = ContinuousClock.now + .seconds(30)
            while count != 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                count = try await matchRuleCount(client, of: client.uniqueName)
            }
            #expect(count == 0)
            await client.close()
            await emitter.close()
        }
    }

    @Test func signalsStreamFinishesOnClose() async throws {
        try await withBus { bus in
            let client = try await bus.connect()
            let stream = try await client.signals(matching: MatchRule(interface: "org.example.Sig"))
            await client.close()
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == nil)
            let error = await dbusError { try await client.signals(matching: MatchRule(member: "X")) }
            #expect(error?.code == .disconnected)
        }
    }
}

// MARK: - Properties, ObjectManager, introspection

private let deviceInterface = Interface(
    "org.example.Device1",
    methods: [
        Method("StartNotify") { call in
            // Changes made before returning go out before the reply; afterReply ones after it.
            let connection = try #require(deviceConnection.withLock { $0 })
            try connection.setProperty(
                "Notifying", to: .boolean(true), interface: "org.example.Device1", at: call.path)
            call.afterReply {
                try? connection.emitSignal(path: call.path, interface: "org.example.Device1", member: "After")
            }
            return []
        }
    ],
    properties: [
        Property("Name", type: .string),
        Property("Alias", type: .string, access: .readWrite),
        Property("RSSI", type: .int16),
        Property("Notifying", type: .boolean),
        Property("Level", type: .byte, access: .readWrite, changes: .invalidates) { value, _ in
            guard case .byte(let level) = value, level <= 100 else {
                throw DBusError(name: "org.example.Error.OutOfRange", message: "level must be at most 100")
            }
            return value
        },
    ],
    signals: [SignalSpec("After")])

private let deviceConnection = Mutex<Connection?>(nil)

@Suite(.serialized) struct ServingTests {
    /// Like bluetoothd: each object also lists Introspectable and Properties (empty maps) in
    /// GetManagedObjects and in the InterfacesAdded that brings it; an interface added to an
    /// existing object comes alone.
    @Test func objectManagerListingStandardInterfaces() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            let plain = Interface("org.example.Plain1", properties: [Property("Level", type: .byte)])
            let extra = Interface("org.example.Extra1")
            try server.export(plain, at: "/org/example/a", properties: ["Level": .byte(1)])
            server.addObjectManager(at: "/", listingStandardInterfaces: true)
            let events = try await client.objectEvents(
                sender: server.uniqueName, pathNamespace: "/org/example")
            let objects = try await client.managedObjects(destination: server.uniqueName)
            #expect(
                Set(objects["/org/example/a"]?.keys.map { $0 } ?? [])
                    == [
                        "org.freedesktop.DBus.Introspectable", "org.example.Plain1",
                        "org.freedesktop.DBus.Properties",
                    ])
            #expect(objects["/org/example/a"]?["org.freedesktop.DBus.Properties"]?.isEmpty == true)

            try server.export(plain, at: "/org/example/b", properties: ["Level": .byte(2)])
            try server.export(extra, at: "/org/example/b")
            var added: [[String]] = []
            var iterator = events.makeAsyncIterator()
            while added.count < 2, let event = await iterator.next()?.element {
                if case .interfacesAdded(_, let interfaces) = event { added.append(interfaces.keys.sorted()) }
            }
            #expect(
                added == [
                    [
                        "org.example.Plain1", "org.freedesktop.DBus.Introspectable",
                        "org.freedesktop.DBus.Properties",
                    ],
                    ["org.example.Extra1"],
                ])
        }
    }

    @Test func propertiesObjectManagerAndOrdering() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            deviceConnection.withLock { $0 = server }
            defer { deviceConnection.withLock { $0 = nil } }
            let client = try await bus.connect()
            let name = server.uniqueName
            try server.export(
                deviceInterface, at: "/org/example/dev1",
                properties: ["Name": .string("HRM"), "Alias": .string("HRM"), "Notifying": .boolean(false)])
            // After dev1, so no InterfacesAdded for it races the subscription.
            server.addObjectManager(at: "/")

            let events = try await client.objectEvents(sender: name, pathNamespace: "/org/example")
            let objects = try await client.managedObjects(destination: name)
            #expect(Array(objects.keys) == ["/org/example/dev1"])
            let dev1 = try #require(objects["/org/example/dev1"]?["org.example.Device1"])
            #expect(try dev1.decode("Name", as: String.self) == "HRM")
            #expect(dev1["RSSI"] == nil)

            // Get / GetAll / Set.
            #expect(
                try await client.getProperty(
                    "Name", interface: "org.example.Device1", path: "/org/example/dev1", destination: name)
                    == .string("HRM"))
            let all = try await client.getAllProperties(
                interface: "org.example.Device1", path: "/org/example/dev1", destination: name)
            #expect(Set(all.keys) == ["Name", "Alias", "Notifying"])
            try await client.setProperty(
                "Alias", to: .string("Chest"), interface: "org.example.Device1", path: "/org/example/dev1",
                destination: name)
            #expect(
                server.property("Alias", interface: "org.example.Device1", at: "/org/example/dev1")
                    == .string("Chest"))
            let readOnly = await dbusError {
                try await client.setProperty(
                    "Name", to: .string("x"), interface: "org.example.Device1", path: "/org/example/dev1",
                    destination: name)
            }
            #expect(readOnly?.code == .propertyReadOnly)
            let wrongType = await dbusError {
                try await client.setProperty(
                    "Alias", to: .uint32(1), interface: "org.example.Device1", path: "/org/example/dev1",
                    destination: name)
            }
            #expect(wrongType?.code == .invalidSignature)
            let absent = await dbusError {
                try await client.getProperty(
                    "RSSI", interface: "org.example.Device1", path: "/org/example/dev1", destination: name)
            }
            #expect(absent?.code == .invalidArgs)
            let refused = await dbusError {
                try await client.setProperty(
                    "Level", to: .byte(200), interface: "org.example.Device1", path: "/org/example/dev1",
                    destination: name)
            }
            #expect(refused?.name == "org.example.Error.OutOfRange")
            try await client.setProperty(
                "Level", to: .byte(50), interface: "org.example.Device1", path: "/org/example/dev1",
                destination: name)

            // Changes made by a method go out before its reply.
            let log = Mutex<[String]>([])
            let ordered = try await client.subscribe([MatchRule(sender: name)]) { message -> Int in
                log.withLock { $0.append(message.member?.rawValue ?? "?") }
                return 0
            }
            _ = try await client.call(
                destination: name, path: "/org/example/dev1", interface: "org.example.Device1",
                member: "StartNotify")
            #expect(log.withLock { $0.first } == "PropertiesChanged")

            // Object manager signals as objects come and go.
            try server.export(deviceInterface, at: "/org/example/dev2", properties: ["Name": .string("Two")])
            try server.setProperties(
                ["RSSI": .int16(-50)], interface: "org.example.Device1", at: "/org/example/dev2")
            try server.setProperties(["RSSI": nil], interface: "org.example.Device1", at: "/org/example/dev2")
            server.unexport(at: "/org/example/dev2")

            var seen: [String] = []
            var iterator = events.makeAsyncIterator()
            while seen.count < 7, let event = await iterator.next()?.element {
                switch event {
                case .propertiesChanged(let change):
                    let changed = change.changed.keys.sorted().map {
                        "\($0)=\(change.changed[$0]?.description ?? "")"
                    }
                    seen.append(
                        "PC \(change.path.lastElement) \(changed.joined(separator: ",")) -\(change.invalidated.joined(separator: ","))"
                    )
                case .interfacesAdded(let path, let interfaces):
                    seen.append(
                        "IA \(path.lastElement) \(interfaces["org.example.Device1"]?["Name"]?.description ?? "")"
                    )
                case .interfacesRemoved(let path, let interfaces):
                    seen.append("IR \(path.lastElement) \(interfaces.joined(separator: ","))")
                }
            }
            #expect(
                seen == [
                    "PC dev1 Alias=\"Chest\" -",
                    "PC dev1  -Level",
                    "PC dev1 Notifying=true -",
                    "IA dev2 \"Two\"",
                    "PC dev2 RSSI=-50 -",
                    "PC dev2  -RSSI",
                    "IR dev2 org.example.Device1",
                ])
            _ = ordered

            // Introspection and Peer.
            let rootXML = try await client.call(
                destination: name, path: "/", interface: .introspectable, member: "Introspect"
            ).decode(String.self)
            #expect(rootXML.contains("<node name=\"org\"/>"))
            #expect(rootXML.contains("org.freedesktop.DBus.ObjectManager"))
            let devXML = try await client.call(
                destination: name, path: "/org/example/dev1", interface: .introspectable, member: "Introspect"
            ).decode(String.self)
            for needle in [
                "org.example.Device1", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer",
                "<method name=\"StartNotify\">", "<property name=\"Alias\" type=\"s\" access=\"readwrite\"/>",
                "value=\"invalidates\"",
            ] {
                #expect(devXML.contains(needle), "\(needle)")
            }
            let unknown = await dbusError {
                try await client.call(
                    destination: name, path: "/nope", interface: .introspectable, member: "Introspect")
            }
            #expect(unknown?.code == .unknownObject)
            _ = try await client.call(
                destination: name, path: "/org/example/dev1", interface: .peer, member: "Ping")
            await client.close()
            await server.close()
        }
    }
}
