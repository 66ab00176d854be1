import Glibc
import Testing

@testable import MQTT

/// What a failed connection attempt is called, from what libmosquitto and the socket said.
@Suite struct ConnectFailureTests {
    static func error(_ systemError: Int32, tls: Bool, wasConnected: Bool = false) -> MQTTError {
        MQTTError.connecting(
            to: "127.0.0.1:1883", clientID: "test", tls: tls,
            LinkFailure(result: MosquittoResult.errno, systemError: systemError, wasConnected: wasConnected))
    }

    /// A reset during a TLS handshake is the handshake failing; of plain MQTT it is not TLS's.
    @Test func aResetIsTLSOnlyForTLS() {
        for code in [ECONNRESET, EPIPE] {
            #expect(Self.error(code, tls: true).code == .tls)
            #expect(Self.error(code, tls: false).code != .tls, "\(Self.error(code, tls: false))")
        }
        #expect(Self.error(ENOTCONN, tls: true, wasConnected: true).code == .tls)
        #expect(Self.error(ENOTCONN, tls: true).code == .unreachable)
        #expect(Self.error(ENOTCONN, tls: false, wasConnected: true).code == .unreachable)
    }
}
