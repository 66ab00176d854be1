internal import CMosquitto
internal import CMosquittoShims
internal import Glibc

/// One connection attempt and, once the broker accepted it, one link: the only owner of a
/// libmosquitto object. A new one is made for every attempt and destroyed when the link ends, so
/// nothing libmosquitto queued survives a link (the outbox is what gets sent again). Used only on
/// the loop thread; libmosquitto calls back into it, on that thread, from inside its loop calls.
final class Link {
    let handle: OpaquePointer
    private let core: ClientCore
    /// The broker's CONNACK said yes.
    var accepted = false
    /// The CONNACK's return code, once it came.
    private(set) var connack: Int32?
    /// What libmosquitto said when the link went (its on_disconnect), with errno at that moment.
    private(set) var lost: (result: Int32, systemError: Int32)?
    /// libmosquitto's error log lines during the attempt: OpenSSL's reasons for a TLS failure.
    private(set) var libraryErrors: [String] = []
    /// The TCP connection was up at some point of the attempt: a reset after that (a plain MQTT
    /// port hanging up on a TLS ClientHello) is not a refused connection, though the socket no
    /// longer has a peer to show.
    private(set) var hadPeer = false

    init(core: ClientCore) throws(MQTTError) {
        let options = core.options
        let url = core.url
        // Clean session: the outbox, not the broker, holds what is still to be delivered, and
        // subscriptions are made again on each link; a persistent session would only pile up
        // messages at the broker for a client that may never come back.
        guard let handle = cmqtt_new(options.clientID.isEmpty ? nil : options.clientID, true, nil) else {
            throw MQTTError(.failed, "libmosquitto could not create a client: \(systemMessage(errno))")
        }
        self.handle = handle
        self.core = core
        cmqtt_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())

        // Every call on this object is made from the loop thread, so libmosquitto is told it is not
        // threaded (its default): a publish then writes to the socket at once rather than waiting
        // for the next loop_write.
        _ = cmqtt_threaded_set(handle, false)
        _ = cmqtt_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        // Small messages at up to hundreds a second: do not let Nagle hold them back.
        _ = cmqtt_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        _ = cmqtt_max_inflight_messages_set(handle, UInt32(ClientCore.window))
        if let username = url.username {
            guard cmqtt_username_pw_set(handle, username, url.password) == MosquittoResult.success else {
                throw MQTTError(.failed, "libmosquitto refused the user name or password (NUL or too long?)")
            }
        }
        if let will = options.will {
            let result = will.payload.withUnsafeBytes { bytes in
                cmqtt_will_set(
                    handle, will.topic, Int32(clamping: bytes.count), bytes.baseAddress, will.qos.rawValue,
                    will.retain)
            }
            guard result == MosquittoResult.success else {
                throw MQTTError(.failed, "libmosquitto refused the will: \(libraryMessage(result))")
            }
        }
        if url.tls {
            let result: Int32
            if let caFile = options.caFile {
                result = cmqtt_tls_set(handle, caFile, nil, nil, nil, nil)
            } else {
                result = cmqtt_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
            }
            guard result == MosquittoResult.success else {
                throw MQTTError(.tls, "libmosquitto cannot set up TLS: \(libraryMessage(result))")
            }
        }

        cmqtt_connect_callback_set(handle) { _, userdata, code in
            guard let userdata else { return }
            Unmanaged<Link>.fromOpaque(userdata).takeUnretainedValue().connack = code
        }
        cmqtt_disconnect_callback_set(handle) { _, userdata, result in
            let systemError = errno
            guard let userdata else { return }
            Unmanaged<Link>.fromOpaque(userdata).takeUnretainedValue().lost = (result, systemError)
        }
        // QoS 1: the broker's PUBACK. (QoS 0 ones are done when handed; their ids match nothing.)
        cmqtt_publish_callback_set(handle) { _, userdata, mid in
            guard let userdata else { return }
            Unmanaged<Link>.fromOpaque(userdata).takeUnretainedValue().core.acknowledged(mid: mid)
        }
        cmqtt_message_callback_set(handle) { _, userdata, message in
            guard let userdata, let message else { return }
            let link = Unmanaged<Link>.fromOpaque(userdata).takeUnretainedValue()
            link.core.continuation.yield(.message(MQTTMessage(message.pointee)))
        }
        cmqtt_log_callback_set(handle) { _, userdata, level, text in
            guard let userdata, let text, level == MOSQ_LOG_ERR else { return }
            let link = Unmanaged<Link>.fromOpaque(userdata).takeUnretainedValue()
            if link.libraryErrors.count < 8 { link.libraryErrors.append(String(cString: text)) }
        }
    }

    deinit {
        // Closes the socket without DISCONNECT if it is still open: the broker publishes the will.
        cmqtt_destroy(handle)
    }

    /// The CONNACK said yes: the log callback was only for the attempt's errors, and formatting a
    /// debug line per packet is not free.
    func markAccepted() {
        accepted = true
        libraryErrors = []
        cmqtt_log_callback_set(handle, nil)
    }

    /// The socket, -1 when closed.
    var socket: Int32 { cmqtt_socket(handle) }

    /// Notes whether the socket is connected now (one getpeername(2)); called during the attempt.
    func notePeer() {
        guard !hadPeer, !accepted else { return }
        hadPeer = Self.hasPeer(socket)
    }

    /// Whether the TCP connection was up at some point, even if a reset has taken the peer away
    /// since: seen during the attempt, or told by the segments the socket received.
    var wasConnected: Bool {
        hadPeer || Self.hasPeer(socket) || cmqtt_tcp_segments_in(socket) >= 2
    }

    /// Whether `socket` has a connected peer.
    static func hasPeer(_ socket: Int32) -> Bool {
        guard socket >= 0 else { return false }
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &length) == 0 }
        }
    }

    func failure(result: Int32, systemError: Int32) -> LinkFailure {
        LinkFailure(
            result: lost?.result ?? result, systemError: lost?.systemError ?? systemError, connack: nil,
            libraryErrors: libraryErrors, wasConnected: !accepted && wasConnected)
    }
}

extension MQTTMessage {
    init(_ message: mosquitto_message) {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        var payload: [UInt8] = []
        if let bytes = message.payload, message.payloadlen > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
        }
        // hrm subscribes with QoS 0 or 1, so the broker never delivers at 2.
        self.init(
            topic: topic, payload: payload, qos: message.qos == 0 ? .atMostOnce : .atLeastOnce,
            retain: message.retain)
    }
}
