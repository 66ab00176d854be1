import DBus
import Logging
import Synchronization
import Testing

/// What a connection logs of its calls, and how values are cut short for a log line.
@Suite struct CallLogTests {
    /// Keeps each record's level and message, with its metadata as `key=value` sorted.
    final class Records: Sendable {
        let value = Mutex<[String]>([])
    }

    struct Recorder: LogHandler {
        let records: Records
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let pairs = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            records.value.withLock {
                $0.append("\(event.level) \(event.message) " + pairs.joined(separator: " "))
            }
        }
    }

    @Test func everyCallAndItsOutcomeIsLoggedAtDebug() async throws {
        try await withBus { bus in
            let server = try await startEchoServer(bus)
            let records = Records()
            let logger = Logger(label: "dbus") { _ in Recorder(records: records, logLevel: .debug) }
            let client = try await Connection(address: bus.address, logger: logger)
            _ = try await client.call(
                destination: "org.example.Test", path: "/echo", interface: "org.example.Echo", member: "Echo",
                body: [.string("hi"), .bytes(Array(0..<40))])
            _ = await dbusError {
                try await client.call(
                    destination: "org.example.Test", path: "/echo", interface: "org.example.Echo",
                    member: "Fail",
                    body: [.string("org.bluez.Error.Failed"), .string("le-connection-abort-by-local")])
            }
            _ = await dbusError {
                try await client.call(
                    destination: "org.example.Test", path: "/echo", interface: "org.example.Echo",
                    member: "Sleep",
                    body: [.uint32(2000)], timeout: .milliseconds(100))
            }
            await client.close()
            await server.close()
            let lines = records.value.withLock { $0 }
            let text = lines.joined(separator: "\n")
            #expect(lines.first?.hasPrefix("debug connecting to \(bus.address)") == true, "\(text)")
            #expect(lines.contains { $0.hasPrefix("debug connected to ") && $0.contains(" ms=") }, "\(text)")
            let echo = lines.first { $0.hasPrefix("debug call org.example.Echo.Echo(") }
            #expect(echo?.contains(#"("hi", ay:000102"#) == true, "\(text)")
            #expect(echo?.contains("…(40 bytes))") == true, "\(text)")
            #expect(echo?.contains("dest=org.example.Test path=/echo timeout=25s") == true, "\(text)")
            #expect(
                lines.contains {
                    $0.hasPrefix(#"debug reply org.example.Echo.Echo: "hi", ay:"#) && $0.contains(" ms=")
                })
            #expect(
                lines.contains {
                    $0.hasPrefix(
                        "debug error org.example.Echo.Fail: org.bluez.Error.Failed: le-connection-abort-by-local"
                    )
                }, "\(text)")
            #expect(
                lines.contains {
                    $0.hasPrefix("debug timeout org.example.Echo.Sleep: no reply within 100 ms")
                }, "\(text)")
            // A call and its outcome carry the same number.
            let number = echo?.split(separator: " ").first { $0.hasPrefix("call=") }
            #expect(number != nil)
            #expect(lines.filter { number.map($0.contains) ?? false }.count == 2, "\(text)")
        }
    }

    @Test func aConnectionWithoutALoggerLogsNothing() async throws {
        #expect(Connection.loggingDisabled.logLevel == .critical)
    }

    @Test func aSummaryIsShort() throws {
        #expect(Value.bytes([6, 0x48]).logSummary() == "ay:0648")
        #expect(Value.bytes(Array(repeating: 1, count: 300)).logSummary().hasSuffix("…(300 bytes)"))
        #expect(Value.string(String(repeating: "x", count: 500)).logSummary().count < 80)
        #expect(Value.variant(.boolean(true)).logSummary() == "true")
        #expect(Value.propertyMap(["RSSI": .int16(-40)]).logSummary() == #"{"RSSI": -40}"#)
        // A large reply stops at the limit and says how long it was.
        let objects = Value.dictionary(
            key: .objectPath, value: .string,
            try (0..<1000).map {
                DictEntry(.objectPath(try ObjectPath("/org/bluez/hci0/dev_\($0)")), .string("x"))
            })
        let summary = objects.logSummary(limit: 100)
        #expect(summary.count < 160, "\(summary)")
        #expect(summary.hasSuffix("… (1000 in all)"), "\(summary)")
    }
}
