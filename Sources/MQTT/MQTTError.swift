internal import CMosquitto
internal import CMosquittoShims
internal import Glibc

/// Every error this module throws. `code` is stable and meant for `switch` (its raw value is what
/// hrm shows); `message` says what went wrong in plain words.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure; the raw value is the stable identifier hrm shows.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The broker URL does not parse (`MQTTBrokerURL(parsing:)`).
        case invalidURL = "mqtt_invalid_url"
        /// The broker's CONNACK said no: bad user name or password, not authorised, bad client id.
        case refused = "mqtt_refused"
        /// The host name does not resolve, nothing listens at the port, no route to the host.
        case unreachable = "mqtt_unreachable"
        /// The TLS handshake failed: certificate verification, host name, protocol.
        case tls = "mqtt_tls"
        /// No answer (TCP, TLS or CONNACK) within the connect timeout.
        case timeout = "mqtt_timeout"
        /// Anything else the library says.
        case failed = "mqtt_failed"
    }

    /// What kind of failure.
    public var code: Code
    /// What went wrong, in words, without any password.
    public var message: String

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code's raw value, then the message: `mqtt_timeout: the broker at … did not answer …`.
    public var description: String { "\(code.rawValue): \(message)" }
}

/// libmosquitto's return codes as Swift integers (its functions return `int`).
enum MosquittoResult {
    static let success = Int32(MOSQ_ERR_SUCCESS.rawValue)
    static let noConnection = Int32(MOSQ_ERR_NO_CONN.rawValue)
    static let connectionRefused = Int32(MOSQ_ERR_CONN_REFUSED.rawValue)
    static let connectionLost = Int32(MOSQ_ERR_CONN_LOST.rawValue)
    static let tls = Int32(MOSQ_ERR_TLS.rawValue)
    static let tlsHandshake = Int32(MOSQ_ERR_TLS_HANDSHAKE.rawValue)
    static let errno = Int32(MOSQ_ERR_ERRNO.rawValue)
    static let lookup = Int32(MOSQ_ERR_EAI.rawValue)
    static let keepAlive = Int32(MOSQ_ERR_KEEPALIVE.rawValue)
    static let protocolError = Int32(MOSQ_ERR_PROTOCOL.rawValue)
    static let malformedPacket = Int32(MOSQ_ERR_MALFORMED_PACKET.rawValue)
    static let noMemory = Int32(MOSQ_ERR_NOMEM.rawValue)

    /// Codes after which the link is gone (or going): every other failure of a publish or subscribe
    /// is about that one message (a bad topic, invalid UTF-8, too large).
    static func meansLinkLost(_ rc: Int32) -> Bool {
        switch rc {
        case noConnection, connectionLost, errno, tls, tlsHandshake, protocolError, malformedPacket,
            keepAlive, noMemory:
            return true
        default: return false
        }
    }
}

/// Why a connection attempt or a link ended, as libmosquitto reported it: the pieces the one
/// mapping below turns into an `MQTTError`.
struct LinkFailure: Sendable, Equatable {
    /// libmosquitto's return code (`MOSQ_ERR_*`).
    var result: Int32
    /// errno at the moment libmosquitto reported it (for `MOSQ_ERR_ERRNO` and `MOSQ_ERR_EAI`,
    /// where libmosquitto stores getaddrinfo's code in errno).
    var systemError: Int32 = 0
    /// The broker's CONNACK return code, when it refused.
    var connack: Int32? = nil
    /// libmosquitto's error log lines during the attempt (OpenSSL's reasons for a TLS failure).
    var libraryErrors: [String] = []
    /// The TCP connection was up before it failed: something listens there, so a failure that
    /// looks like "refused or no route" (a reset takes the peer away) is the peer hanging up.
    var wasConnected = false
}

extension MQTTError {
    /// The one place where what libmosquitto reported becomes an `MQTTError`; `broker` is the
    /// URL's description (no password), `tls` whether the URL asked for it.
    static func connecting(to broker: String, clientID: String, tls: Bool, _ failure: LinkFailure)
        -> MQTTError
    {
        let at = "the broker at \(broker)"
        let plainPortHint = " (a plain MQTT port? use mqtt://)"
        if let connack = failure.connack {
            switch connack {
            case 1: return MQTTError(.failed, "\(at) does not accept MQTT 3.1.1")
            case 2: return MQTTError(.refused, "\(at) refused the client id '\(clientID)'")
            case 3: return MQTTError(.failed, "\(at) said it is unavailable")
            case 4: return MQTTError(.refused, "\(at) refused the user name or password")
            case 5:
                return MQTTError(
                    .refused, "\(at) did not authorise this client (wrong user name or password?)")
            default: return MQTTError(.failed, "\(at) refused the connection (CONNACK \(connack))")
            }
        }
        let reason = failure.libraryErrors.isEmpty ? "" : ": " + failure.libraryErrors.joined(separator: "; ")
        switch failure.result {
        case MosquittoResult.tls, MosquittoResult.tlsHandshake:
            // OpenSSL's "unexpected eof": the peer hung up on the ClientHello, as a plain port does.
            let plain = failure.libraryErrors.contains { $0.contains("unexpected eof") }
            return MQTTError(
                .tls, "the TLS handshake with \(at) failed\(plain ? plainPortHint : "")\(reason)")
        case MosquittoResult.lookup:
            return MQTTError(
                .unreachable, "cannot resolve \(at): \(String(cString: gai_strerror(failure.systemError)))")
        case MosquittoResult.errno:
            switch failure.systemError {
            case ECONNREFUSED:
                return MQTTError(.unreachable, "nothing is listening at \(broker) (connection refused)")
            case ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL:
                return MQTTError(.unreachable, "no route to \(at) (\(systemMessage(failure.systemError)))")
            // Something listens, and reset the connection during the handshake, as a plain port
            // resets a ClientHello (a reset takes the peer away: ENOTCONN once it was up). Each
            // pattern has its own `where`: a reset of a plain mqtt:// attempt is not TLS's.
            case ECONNRESET where tls, EPIPE where tls, ENOTCONN where tls && failure.wasConnected:
                return MQTTError(
                    .tls, "the TLS handshake with \(at) failed: it reset the connection\(plainPortHint)")
            case ENOTCONN:
                return MQTTError(.unreachable, "cannot connect to \(at) (connection refused or no route)")
            case ETIMEDOUT: return MQTTError(.timeout, "\(at) did not answer (\(systemMessage(ETIMEDOUT)))")
            default:
                return MQTTError(
                    .failed, "the connection to \(at) failed: \(systemMessage(failure.systemError))")
            }
        case MosquittoResult.connectionLost where tls:
            // Something listens, and hung up during the handshake: a plain port resets a ClientHello.
            return MQTTError(
                .tls, "the TLS handshake with \(at) failed: it closed the connection\(plainPortHint)\(reason)"
            )
        case MosquittoResult.connectionLost:
            // A TLS port spoken to in plain MQTT closes at once; say so rather than only "closed".
            return MQTTError(
                .failed,
                "\(at) closed the connection before accepting it (if it is a TLS port, use mqtts://)\(reason)"
            )
        case MosquittoResult.protocolError, MosquittoResult.malformedPacket:
            return MQTTError(.failed, "\(at) answered with something that is not MQTT\(reason)")
        case MosquittoResult.keepAlive:
            return MQTTError(.timeout, "\(at) did not answer within the keep-alive")
        default:
            return MQTTError(
                .failed, "the connection to \(at) failed: \(libraryMessage(failure.result))\(reason)")
        }
    }
}

/// Why an accepted link ended, for `MQTTEvent.disconnected(reason:)`.
func disconnectReason(_ failure: LinkFailure) -> String {
    switch failure.result {
    case MosquittoResult.connectionLost: return "the broker closed the connection"
    case MosquittoResult.keepAlive: return "no answer from the broker within the keep-alive"
    case MosquittoResult.errno: return systemMessage(failure.systemError)
    case MosquittoResult.tls, MosquittoResult.tlsHandshake:
        return (["TLS error"] + failure.libraryErrors).joined(separator: ": ")
    default: return libraryMessage(failure.result)
    }
}

func systemMessage(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}

func libraryMessage(_ result: Int32) -> String {
    guard let text = cmqtt_strerror(result) else { return "libmosquitto error \(result)" }
    return String(cString: text)
}
