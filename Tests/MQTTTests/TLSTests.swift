import BrokerSupport
import Foundation
import MQTT
import Testing

/// mqtts against a broker whose certificate a CA made here signed (openssl, EC keys: fast).
@Suite struct TLSTests {
    struct Certificates {
        var broker: Broker.TLSFiles
        /// A CA that signed nothing the broker has.
        var otherCA: URL
    }

    private func makeCertificates(in directory: URL) async throws -> Certificates {
        let openssl = Tools.openssl ?? "openssl"
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let extensions = file("server.ext")
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-x509"] + ec + [
                "-keyout", file("ca.key"), "-out", file("ca.crt"), "-days", "2", "-subj", "/CN=hrm test CA",
            ],
            ["req", "-x509"] + ec + [
                "-keyout", file("other.key"), "-out", file("other.crt"), "-days", "2", "-subj",
                "/CN=other CA",
            ],
            ["req"] + ec + [
                "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=127.0.0.1",
            ],
            [
                "x509", "-req", "-in", file("server.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"),
                "-CAcreateserial", "-out", file("server.crt"), "-days", "2", "-extfile", extensions,
            ],
        ]
        for arguments in steps {
            let (status, output) = try await run(openssl, arguments)
            guard status == 0 else {
                throw TestFailure("openssl \(arguments.joined(separator: " ")): \(output)")
            }
        }
        return Certificates(
            broker: Broker.TLSFiles(
                ca: URL(fileURLWithPath: file("ca.crt")),
                certificate: URL(fileURLWithPath: file("server.crt")),
                key: URL(fileURLWithPath: file("server.key"))),
            otherCA: URL(fileURLWithPath: file("other.crt")))
    }

    private func withTLSBroker(_ body: (Broker, Certificates) async throws -> Void) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try await makeCertificates(in: directory)
        try await withBroker(tls: certificates.broker) { broker in try await body(broker, certificates) }
    }

    private func tlsURL(_ broker: Broker) throws -> MQTTBrokerURL {
        try MQTTBrokerURL(parsing: "mqtts://127.0.0.1:\(broker.tlsPort ?? 0)")
    }

    @Test func theRightCAConnectsAndPublishes() async throws {
        guard requireTools(Tools.tlsMissing) else { return }
        try await withTLSBroker { broker, certificates in
            // The witness listens on the broker's plain port.
            let subscriber = try broker.subscriber(topics: ["secure/#"], format: "%t %p")
            var options = quickOptions()
            options.caFile = certificates.broker.ca.path
            let client = try MQTTClient(tlsURL(broker), options: options)
            try await client.connect()
            #expect(
                await subscriber.waitUntilSubscribed(
                    client, probe: MQTTMessage(topic: "secure/probe", text: "p")))
            client.publish(MQTTMessage(topic: "secure/bpm", text: "72"))
            #expect(await subscriber.wait { $0.contains("secure/bpm 72") })
            #expect(await eventually { client.outboxCount == 0 })
            await client.close(within: .seconds(2))
        }
    }

    @Test func aWrongCAIsATLSError() async throws {
        guard requireTools(Tools.tlsMissing) else { return }
        try await withTLSBroker { broker, certificates in
            for caFile in [certificates.otherCA.path, nil] {
                var options = quickOptions()
                options.caFile = caFile  // nil: the system store, which does not know this CA either
                let client = try MQTTClient(tlsURL(broker), options: options)
                let error = await connectError(client)
                #expect(error?.code == .tls, "\(String(describing: error))")
                #expect(
                    error?.message.contains("certificate verify failed") == true,
                    "\(String(describing: error))")
                await client.close(within: .seconds(1))
            }
        }
    }

    /// Plain MQTT to the TLS port: the broker hangs up; the message suggests mqtts://.
    @Test func plainMQTTToATLSPort() async throws {
        guard requireTools(Tools.tlsMissing) else { return }
        try await withTLSBroker { broker, _ in
            var options = quickOptions()
            options.connectTimeout = .seconds(5)
            let url = try MQTTBrokerURL(parsing: "mqtt://127.0.0.1:\(broker.tlsPort ?? 0)")
            let client = try MQTTClient(url, options: options)
            let error = await connectError(client)
            #expect(error?.code == .failed, "\(String(describing: error))")
            #expect(error?.message.contains("use mqtts://") == true, "\(String(describing: error))")
            await client.close(within: .seconds(1))
        }
    }

    /// mqtts:// to a plain MQTT port: the broker resets the connection on the ClientHello. That
    /// is a failed TLS handshake, whichever way the reset reaches the client, never "connection
    /// refused" (something is listening); ten times over, since which way it comes is a race.
    @Test func tlsToAPlainPortIsATLSError() async throws {
        guard requireTools(Tools.brokerMissing) else { return }
        try await withBroker { broker in
            for _ in 0..<10 {
                var options = quickOptions()
                options.connectTimeout = .seconds(10)
                let url = try MQTTBrokerURL(parsing: "mqtts://127.0.0.1:\(broker.port)")
                let client = try MQTTClient(url, options: options)
                let error = await connectError(client)
                #expect(error?.code == .tls, "\(String(describing: error))")
                #expect(error?.message.contains("use mqtt://") == true, "\(String(describing: error))")
                await client.close(within: .seconds(1))
            }
        }
    }

    @Test func anUnreadableCAFileIsRefusedAtOnce() throws {
        var options = quickOptions()
        options.caFile = "/nonexistent/ca.crt"
        #expect {
            _ = try MQTTClient(MQTTBrokerURL(parsing: "mqtts://127.0.0.1"), options: options)
        } throws: { error in
            (error as? MQTTError)?.code == .tls
        }
    }
}
