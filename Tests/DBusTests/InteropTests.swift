import DBus
import Foundation
import Testing

/// python3-dbus is installed for the system interpreter, not for a pyenv one first on PATH.
private let python = "/usr/bin/python3"

private let pythonClient = #"""
    import sys, dbus
    import xml.etree.ElementTree as ET
    bus = dbus.bus.BusConnection(sys.argv[1])
    obj = bus.get_object("org.example.Test", "/org/example/dev", introspect=False)
    echo = dbus.Interface(obj, "org.example.Echo")
    r = echo.Echo(dbus.Byte(7), dbus.Int16(-3), "héllo", dbus.ObjectPath("/a/b"), dbus.Array([], signature="o"),
                  dbus.Dictionary({"k": dbus.UInt32(1, variant_level=1)}, signature="sv"),
                  dbus.Struct((dbus.Int32(1), dbus.Array([dbus.Byte(1), dbus.Byte(2)], signature="y")), signature=None))
    print("echo", int(r[0]), int(r[1]), str(r[2]), str(r[3]), r[4].signature, len(r[4]), int(r[5]["k"]), int(r[6][0]), bytes(r[6][1]).hex())
    props = dbus.Interface(obj, "org.freedesktop.DBus.Properties")
    print("get", str(props.Get("org.example.Dev1", "Name")))
    print("getall", sorted(str(k) for k in props.GetAll("org.example.Dev1").keys()))
    props.Set("org.example.Dev1", "Alias", dbus.String("py", variant_level=1))
    print("set", str(props.Get("org.example.Dev1", "Alias")))
    try:
        echo.Fail("org.example.Error.Nope", "no way")
    except dbus.exceptions.DBusException as e:
        print("error", e.get_dbus_name(), e.get_dbus_message())
    root = ET.fromstring(str(bus.get_object("org.example.Test", "/").Introspect(dbus_interface="org.freedesktop.DBus.Introspectable")))
    print("root-nodes", [n.get("name") for n in root.findall("node")])
    dev = ET.fromstring(str(obj.Introspect(dbus_interface="org.freedesktop.DBus.Introspectable")))
    print("dev-interfaces", sorted(i.get("name") for i in dev.findall("interface")))
    om = bus.get_object("org.example.Test", "/")
    objs = om.GetManagedObjects(dbus_interface="org.freedesktop.DBus.ObjectManager")
    print("managed", sorted(str(k) for k in objs.keys()))
    """#

private let pythonService = #"""
    import sys, dbus, dbus.service, dbus.mainloop.glib
    from gi.repository import GLib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])

    class Service(dbus.service.Object):
        @dbus.service.method("org.example.Py", in_signature="s", out_signature="s")
        def Hello(self, name):
            return "hello " + name

        @dbus.service.method("org.example.Py", in_signature="a{sv}", out_signature="a{sv}")
        def Props(self, props):
            return props

        @dbus.service.method("org.example.Py", in_signature="", out_signature="")
        def Boom(self):
            raise dbus.exceptions.DBusException("it broke", name="org.example.Error.Boom")

        @dbus.service.method("org.example.Py", in_signature="u", out_signature="")
        def Emit(self, n):
            for i in range(n):
                self.Tick(dbus.UInt32(i))

        @dbus.service.method("org.example.Py", in_signature="", out_signature="")
        def Quit(self):
            GLib.idle_add(loop.quit)

        @dbus.service.signal("org.example.Py", signature="u")
        def Tick(self, i):
            pass

    name = dbus.service.BusName("org.example.Py", bus)
    Service(bus, "/org/example/py")
    loop = GLib.MainLoop()
    GLib.timeout_add_seconds(20, loop.quit)
    loop.run()
    """#

@Suite struct InteropTests {
    @Test func pythonClientUsesOurObjects() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            server.addObjectManager(at: "/")
            try server.export(
                [
                    ExportedInterface(echoInterface),
                    ExportedInterface(
                        Interface(
                            "org.example.Dev1",
                            properties: [
                                Property("Name", type: .string),
                                Property("Alias", type: .string, access: .readWrite),
                            ]),
                        properties: ["Name": .string("HRM"), "Alias": .string("HRM")]),
                ], at: "/org/example/dev")
            #expect(try await server.requestName("org.example.Test") == .primaryOwner)
            let result = try await run(python, ["-c", pythonClient, bus.address])
            #expect(result.status == 0, "\(result.errors)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(
                lines == [
                    "echo 7 -3 héllo /a/b o 0 1 1 0102",
                    "get HRM",
                    "getall ['Alias', 'Name']",
                    "set py",
                    "error org.example.Error.Nope no way",
                    "root-nodes ['org']",
                    "dev-interfaces ['org.example.Dev1', 'org.example.Echo', 'org.freedesktop.DBus.Introspectable', 'org.freedesktop.DBus.Peer', 'org.freedesktop.DBus.Properties']",
                    "managed ['/org/example/dev']",
                ])
            await server.close()
        }
    }

    @Test func dbusSendCallsOurObject() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let result = try await run(
                "/usr/bin/dbus-send",
                [
                    "--bus=\(bus.address)", "--print-reply", "--dest=org.example.Test", "/echo",
                    "org.example.Echo.Echo",
                    "string:hi", "uint32:5", "array:string:a,b", "dict:string:int32:x,1",
                ])
            #expect(result.status == 0, "\(result.errors)")
            for needle in ["string \"hi\"", "uint32 5", "string \"a\"", "int32 1"] {
                #expect(result.output.contains(needle), "\(needle) in \(result.output)")
            }
            await server.close()
        }
    }

    @Test func weCallAPythonServiceAndReceiveItsSignals() async throws {
        try await withBus { bus in
            let client = try await bus.connect()
            let service = Task { try await run(python, ["-c", pythonService, bus.address]) }
            // Wait for the service to own its name.
            var owner: BusName? = nil
            for _ in 0..<100 where owner == nil {
                owner = try await client.nameOwner("org.example.Py")
                if owner == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(owner != nil)
            let py: BusName = "org.example.Py"
            let hello = try await client.call(
                destination: py, path: "/org/example/py", interface: "org.example.Py", member: "Hello",
                body: [.string("swift")])
            #expect(try hello.decode(String.self) == "hello swift")
            let map = Value.propertyMap(["a": .uint16(1), "b": .bytes([1, 2]), "c": .objectPaths([])])
            let props = try await client.call(
                destination: py, path: "/org/example/py", interface: "org.example.Py", member: "Props",
                body: [map])
            #expect(props.body == [map])
            let boom = await dbusError {
                try await client.call(
                    destination: py, path: "/org/example/py", interface: "org.example.Py", member: "Boom")
            }
            #expect(boom?.name == "org.example.Error.Boom")
            #expect(boom?.message == "it broke")
            let ticks = try await client.signals(
                matching: MatchRule(
                    sender: py, path: "/org/example/py", interface: "org.example.Py", member: "Tick"))
            _ = try await client.call(
                destination: py, path: "/org/example/py", interface: "org.example.Py", member: "Emit",
                body: [.uint32(3)])
            var received: [UInt32] = []
            var iterator = ticks.makeAsyncIterator()
            while received.count < 3, let message = await iterator.next()?.element {
                received.append(try message.decode(UInt32.self))
            }
            #expect(received == [0, 1, 2])
            try client.callNoReply(
                destination: py, path: "/org/example/py", interface: "org.example.Py", member: "Quit")
            let result = try await service.value
            #expect(result.status == 0, "\(result.errors)")
            await client.close()
        }
    }
}
