import DBus
import Foundation
import Synchronization
import Testing

private func echo(_ client: Connection, _ body: [Value], timeout: Duration = .seconds(5)) async throws
    -> Message
{
    try await client.call(
        destination: "org.example.Test", path: "/echo", interface: "org.example.Echo", member: "Echo",
        body: body,
        timeout: timeout)
}

@Suite struct BusTests {
    @Test func everyTypeRoundTrips() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let client = try await bus.connect()
            var deep: Value = .string("bottom")
            for _ in 0..<30 { deep = .variant(deep) }
            var nestedArray: Value = .array(.int32, [.int32(1)])
            for _ in 0..<20 { nestedArray = .array(nestedArray.type, [nestedArray]) }
            let values: [Value] = [
                .byte(0xFF), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535),
                .int32(Int32.min),
                .uint32(UInt32.max), .int64(Int64.min), .uint64(UInt64.max), .double(-1.5e300), .string(""),
                .string("héllo ✓ 𝄞"), .objectPath("/org/bluez/hci0"), .signature("a{oa{sa{sv}}}"),
                .bytes([]), .bytes([0, 1, 2, 255]), .propertyMap([:]), .objectPaths([]),
                .strings(["a", "b"]),
                .propertyMap(["RSSI": .int16(-40), "UUIDs": .strings(["180d"]), "Data": .bytes([1])]),
                .dictionary(
                    key: .objectPath,
                    value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                    [
                        DictEntry(
                            .objectPath("/a"),
                            .dictionary(
                                key: .string, value: .dictionary(key: .string, value: .variant),
                                [
                                    DictEntry(
                                        .string("org.bluez.Device1"),
                                        .propertyMap(["Connected": .boolean(true)]))
                                ]))
                    ]),
                .dictionary(key: .uint64, value: .structure([.string, .array(.double)]), []),
                .dictionary(
                    key: .byte, value: .structure([.string, .array(.double)]),
                    [
                        DictEntry(
                            .byte(1), .structure([.string("x"), .array(.double, [.double(1), .double(2)])]))
                    ]),
                .structure([.int32(1), .structure([.string("in"), .variant(.bytes([9]))])]),
                .array(
                    .variant, [.variant(.int32(1)), .variant(.string("two")), .variant(.propertyMap([:]))]),
                .variant(.variant(.array(.objectPath, []))),
                deep, nestedArray,
            ]
            let reply = try await echo(client, values)
            #expect(reply.body == values)
            #expect(reply.signature == (try Signature(values.map(\.type))))
            // One at a time too, so a failure names the type.
            for value in values {
                let single = try await echo(client, [value])
                #expect(single.body == [value], "\(value.type)")
            }
            await client.close()
            await server.close()
        }
    }

    @Test func invalidValuesAreRefusedBeforeLibdbus() async throws {
        try await withBus { bus in
            let client = try await bus.connect()
            let cases: [(Value, DBusError.Code)] = [
                (.array(.string, [.int32(1)]), .invalidValue),
                (.string("nul\u{0}inside"), .invalidValue),
                (.dictionary(key: .variant, value: .string, []), .invalidValue),
                (.structure([]), .invalidValue),
                (.bytes([UInt8](repeating: 0, count: (1 << 26) + 1)), .limitsExceeded),
            ]
            for (value, code) in cases {
                let error = await dbusError { try await echo(client, [value]) }
                #expect(error?.code == code, "\(value.type)")
            }
            var tooDeep: Value = .int32(1)
            for _ in 0..<70 { tooDeep = .variant(tooDeep) }
            let deepError = await dbusError { try await echo(client, [tooDeep]) }
            #expect(deepError?.code == .invalidValue)
            var deepArray: Value = .int32(1)
            for _ in 0..<33 { deepArray = .array(deepArray.type, [deepArray]) }
            let deepArrayError = await dbusError { try await echo(client, [deepArray]) }
            #expect(deepArrayError?.code == .invalidSignature)
            #expect(client.isConnected)
            await client.close()
        }
    }

    @Test func errorsCarryNamesAndCodes() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let client = try await bus.connect()
            func call(
                _ dest: BusName, _ path: ObjectPath, _ iface: InterfaceName, _ member: MemberName,
                _ body: [Value] = []
            )
                async -> DBusError?
            {
                await dbusError {
                    try await client.call(
                        destination: dest, path: path, interface: iface, member: member, body: body)
                }
            }
            let t: BusName = "org.example.Test"
            #expect(await call(t, "/nothing", "org.example.Echo", "Echo")?.code == .unknownObject)
            #expect(await call(t, "/echo", "org.example.Nope", "Echo")?.code == .unknownInterface)
            #expect(await call(t, "/echo", "org.example.Echo", "Nope")?.code == .unknownMethod)
            let invalid = await call(t, "/echo", "org.example.Echo", "Sleep", [.string("x")])
            #expect(invalid?.code == .invalidArgs)
            #expect(invalid?.message.contains("'u'") == true)
            let custom = await call(
                t, "/echo", "org.example.Echo", "Fail",
                [.string("org.bluez.Error.InProgress"), .string("busy")])
            #expect(custom?.name == "org.bluez.Error.InProgress")
            #expect(custom?.message == "busy")
            #expect(custom?.code == .failed)
            #expect(await call("org.example.Missing", "/", "org.example.X", "Y")?.code == .serviceUnknown)
            let owner = await dbusError {
                try await client.call(
                    destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "GetNameOwner",
                    body: [.string("org.example.Missing")])
            }
            #expect(owner?.code == .nameHasNoOwner)
            #expect(try await client.nameOwner("org.example.Missing") == nil)
            // A reply of the wrong type is a thrown error, not a crash.
            let reply = try await echo(client, [.string("x")])
            let mismatch = #expect(throws: DBusError.self) { try reply.decode(UInt32.self) }
            #expect(mismatch?.code == .typeMismatch)
            #expect(mismatch?.message.contains("argument 0") == true)
            await client.close()
            await server.close()
        }
    }

    @Test func timeoutsAndCancellation() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let client = try await bus.connect()
            let error = await dbusError {
                try await client.call(
                    destination: "org.example.Test", path: "/echo", interface: "org.example.Echo",
                    member: "Sleep",
                    body: [.uint32(3000)], timeout: .milliseconds(200))
            }
            // No reply, not the answer the server sends after 3 s: the timeout ended the call.
            #expect(error?.code == .noReply)
            let task = Task {
                try await client.call(
                    destination: "org.example.Test", path: "/echo", interface: "org.example.Echo",
                    member: "Sleep",
                    body: [.uint32(3001)])
            }
            // Cancelled while the server has it.
            #expect(await untilSleeping(3001))
            task.cancel()
            let cancelled = await dbusError { try await task.value }
            #expect(cancelled?.code == .cancelled)
            // The connection still works.
            #expect(try await echo(client, [.int32(5)]).body == [.int32(5)])
            await client.close()
            await server.close()
        }
    }

    @Test func thousandConcurrentCalls() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let client = try await bus.connect()
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<1000 {
                    group.addTask {
                        let reply = try await echo(client, [.uint32(UInt32(i)), .string("call \(i)")])
                        return reply.body == [.uint32(UInt32(i)), .string("call \(i)")]
                    }
                }
                var ok = 0
                for try await matched in group where matched { ok += 1 }
                #expect(ok == 1000)
            }
            await client.close()
            await server.close()
        }
    }

    @Test func callsFromTheConnectionsOwnThread() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let client = try await bus.connect()
            let sum = try await withTaskExecutorPreference(client.taskExecutor) {
                var sum: UInt32 = 0
                for i in 0..<100 { sum += try await echo(client, [.uint32(UInt32(i))]).decode(UInt32.self) }
                return sum
            }
            #expect(sum == 4950)
            await client.close()
            // After close, work preferring the stopped loop still runs (and fails cleanly).
            let error = await dbusError {
                try await withTaskExecutorPreference(client.taskExecutor) { try await echo(client, []) }
            }
            #expect(error?.code == .disconnected)
            await server.close()
        }
    }

    @Test func requestName() async throws {
        try await withBus { bus in
            let a = try await bus.connect()
            let b = try await bus.connect()
            #expect(try await a.requestName("org.example.Name") == .primaryOwner)
            #expect(try await a.requestName("org.example.Name") == .alreadyOwner)
            #expect(try await b.requestName("org.example.Name") == .exists)
            #expect(try await b.requestName("org.example.Name", flags: []) == .inQueue)
            #expect(try await a.releaseName("org.example.Name") == .released)
            #expect(try await a.nameOwner("org.example.Name") == b.uniqueName)
            await a.close()
            await b.close()
        }
    }

    @Test func unixFDsBothWays() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            #expect(await client.canPassUnixFDs)
            let kept = Mutex<UnixFD?>(nil)
            try server.export(
                Interface(
                    "org.example.Fd",
                    methods: [
                        // Like BlueZ's AcquireNotify: a SOCK_SEQPACKET socket and an MTU.
                        Method("Acquire", input: "a{sv}", output: "hq") { _ in
                            var pair: [Int32] = [0, 0]
                            guard
                                socketpair(
                                    AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0,
                                    &pair) == 0
                            else { throw DBusError(.failed, "socketpair") }
                            let ours = UnixFD(taking: pair[0])
                            kept.withLock { $0 = ours }
                            let theirs = UnixFD(taking: pair[1])
                            return [.unixFD(theirs), .uint16(23)]
                        },
                        // Reads one datagram from a descriptor the caller sent.
                        Method("ReadFrom", input: "h", output: "ay") { call in
                            let fd = try call.decode(UnixFD.self)
                            var buffer = [UInt8](repeating: 0, count: 64)
                            let n = buffer.withUnsafeMutableBytes {
                                read(fd.descriptor ?? -1, $0.baseAddress, 64)
                            }
                            return [.bytes(Array(buffer.prefix(max(0, n))))]
                        },
                    ]),
                at: "/fd")
            let reply = try await client.call(
                destination: server.uniqueName, path: "/fd", interface: "org.example.Fd", member: "Acquire",
                body: [.propertyMap([:])])
            let (fd, mtu) = try reply.decode(UnixFD.self, UInt16.self)
            #expect(mtu == 23)
            let ours = try #require(kept.withLock { $0 })
            let sent: [UInt8] = [0x06, 72]
            _ = sent.withUnsafeBytes { write(ours.descriptor ?? -1, $0.baseAddress, 2) }
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = buffer.withUnsafeMutableBytes { read(fd.descriptor ?? -1, $0.baseAddress, 16) }
            #expect(Array(buffer.prefix(n)) == sent)
            // The other way: send a pipe's read end.
            var p: [Int32] = [0, 0]
            #expect(pipe(&p) == 0)
            _ = [UInt8]([1, 2, 3]).withUnsafeBytes { write(p[1], $0.baseAddress, 3) }
            close(p[1])
            let readEnd = UnixFD(taking: p[0])
            let echoed = try await client.call(
                destination: server.uniqueName, path: "/fd", interface: "org.example.Fd", member: "ReadFrom",
                body: [.unixFD(readEnd)])
            #expect(echoed.body == [.bytes([1, 2, 3])])
            #expect(readEnd.descriptor != nil)  // sending duplicates; ours stays open
            fd.close()
            #expect(fd.descriptor == nil)
            await client.close()
            await server.close()
        }
    }

    @Test func daemonKilledMidCall() async throws {
        let bus = try TestBus()
        let server = try await startEchoServer(bus)
        let client = try await bus.connect()
        let stream = try await client.signals(matching: MatchRule(interface: "org.example.Never"))
        let call = Task {
            try await client.call(
                destination: "org.example.Test", path: "/echo", interface: "org.example.Echo",
                member: "Sleep",
                body: [.uint32(10_001)], timeout: .seconds(20))
        }
        // Killed while the call is in the server's hands.
        #expect(await untilSleeping(10_001))
        bus.kill()
        // Disconnected, not a timeout (no reply) nor the server's answer after 10 s.
        let error = await dbusError { try await call.value }
        #expect(error?.code == .disconnected)
        // The stream finishes.
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        #expect(!client.isConnected)
        let after = await dbusError { try await echo(client, []) }
        #expect(after?.code == .disconnected)
        await client.close()
        await server.close()
    }
}
