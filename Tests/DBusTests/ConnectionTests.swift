import DBus
import Foundation
import Testing

@Suite struct ConnectionTests {
    @Test func connectsAndCloses() async throws {
        try await withBus { bus in
            let connection = try await bus.connect()
            #expect(connection.uniqueName.isUnique)
            #expect(connection.isConnected)
            let owner = try await connection.nameOwner(connection.uniqueName)
            #expect(owner == connection.uniqueName)
            await connection.close()
            await connection.close()
            #expect(!connection.isConnected)
            let error = await dbusError { try await connection.nameOwner("org.example.Nobody") }
            #expect(error?.code == .disconnected)
        }
    }

    @Test func badAddressFails() async throws {
        let error = await dbusError { try await Connection(address: "unix:path=/nonexistent/socket") }
        #expect(error?.code == .connectionFailed)
    }

    @Test func systemBusHonoursEnvironment() async throws {
        try await withBus { bus in
            setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
            let connection = try await Connection.system()
            #expect(connection.uniqueName.isUnique)
            await connection.close()
        }
    }

    @Test func echoRoundTrip() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let client = try await bus.connect()
            let reply = try await client.call(
                destination: "org.example.Test", path: "/echo", interface: "org.example.Echo", member: "Echo",
                body: [.string("hello"), .uint32(7)])
            #expect(reply.signature == "su")
            let (s, u) = try reply.decode(String.self, UInt32.self)
            #expect(s == "hello" && u == 7)
            await client.close()
            await server.close()
        }
    }
}
