internal import CMosquitto
internal import CMosquittoShims
internal import Glibc
internal import Threads

/// The client's loop thread: owns the current `Link` and drives libmosquitto from its own poll(2)
/// over the link's socket and the client's eventfd (libmosquitto's "external loop" functions:
/// loop_read, loop_write, loop_misc), rather than mosquitto_loop_start: the outbox decides what is
/// sent, each attempt needs its own deadline, and publish() must be able to wake the loop, which
/// libmosquitto's thread offers no way to do without handing it the message itself.
final class Engine {
    private let core: ClientCore
    private var link: Link?
    /// The generation whose first attempt this thread made.
    private var generation: UInt64 = 0
    private var attemptDeadline: UInt64 = 0
    private var nextAttempt: UInt64 = 0
    private var backoff: Duration
    /// Subscriptions made on the current link, and the version of the list they came from.
    private var subscribed: [String: MQTTQoS] = [:]
    private var subscriptionsVersion = -1
    private var lastDropReport: UInt64 = 0
    /// When the link's socket was last read, and the outbox's handed entries after the last feed:
    /// with `options.readDelay`, what decides whether the socket's input may wait.
    private var lastRead: UInt64 = 0
    private var handed = 0

    /// The backoff's start: at least 10 ms, or a broker that refuses at once would be retried in
    /// a tight loop.
    private let firstDelay: Duration

    init(core: ClientCore) {
        self.core = core
        firstDelay = max(core.options.reconnectDelay.lowerBound, .milliseconds(10))
        backoff = firstDelay
    }

    func run() {
        // libmosquitto writes with write(2): a broker that vanished would raise SIGPIPE, which
        // must not kill the process; blocked on this thread, it leaves write(2) failing with EPIPE.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        while step() {}
        link = nil
    }

    /// One turn: decide, feed the link, sleep in poll(2), let libmosquitto read and write.
    private func step() -> Bool {
        var now = monotonicNanos()
        let reportDrops = now &- lastDropReport >= ClientCore.dropReportInterval.clampedNanoseconds
        guard let snapshot = core.snapshot(reportDrops: reportDrops) else { return false }
        if snapshot.dropped > 0 {
            lastDropReport = now
            core.continuation.yield(.dropped(count: snapshot.dropped))
        }

        var closeDeadline: UInt64? = nil
        // When to try again if there is no link; nil while connect() waits on a failed first
        // attempt (the next snapshot says idle) or it was given up.
        var reconnectAt: UInt64? = nil
        switch snapshot.mode {
        case .idle, .closed: return false
        case .starting:
            if snapshot.generation != generation {
                link = nil
                generation = snapshot.generation
                backoff = firstDelay
                startAttempt(now: now)
                return true
            }
        case .running:
            if link == nil, now >= nextAttempt {
                startAttempt(now: now)
                return true
            }
            reconnectAt = nextAttempt
        case .closing(let deadline):
            if let link, link.accepted, snapshot.outboxEmpty || now >= deadline {
                sayGoodbye(link)
                self.link = nil
                core.finishClose()
                return true
            }
            if now >= deadline {
                link = nil
                core.finishClose()
                return true
            }
            if link == nil, now >= nextAttempt {
                startAttempt(now: now)
                return true
            }
            closeDeadline = deadline
            reconnectAt = nextAttempt
        }

        if let link, link.accepted, !feed(link) { return true }
        // Input may wait (options.readDelay) on an accepted link that is not closing, while few
        // messages await their acknowledgement: the next wake-up reads it.
        var readAt: UInt64? = nil
        if let link, link.accepted, closeDeadline == nil, handed < ClientCore.window / 2 {
            let delay = core.options.readDelay.clampedNanoseconds
            if delay > 0, now &- lastRead < delay { readAt = lastRead &+ delay }
        }

        // Sleep until something happens or the nearest deadline.
        var wakeAt = now &+ 1_000_000_000  // libmosquitto's keep-alive wants loop_misc about every second
        if let closeDeadline { wakeAt = min(wakeAt, closeDeadline) }
        if core.hasUnreportedDrops {
            wakeAt = min(wakeAt, lastDropReport &+ ClientCore.dropReportInterval.clampedNanoseconds)
        }
        if let readAt { wakeAt = min(wakeAt, readAt) }
        var fds = [pollfd(fd: core.wakeFD.descriptor, events: Int16(POLLIN), revents: 0)]
        if let link {
            if !link.accepted { wakeAt = min(wakeAt, attemptDeadline) }
            let socket = link.socket
            if socket >= 0 {
                // Without POLLIN poll(2) still reports an error or a hang-up (a reset link).
                var events = readAt == nil ? Int16(POLLIN) : 0
                if cmqtt_want_write(link.handle) {
                    // During a TLS handshake libmosquitto wants to write (its CONNECT is queued)
                    // while OpenSSL waits to read: asking for POLLOUT would spin. Poll for input
                    // and retry the write every 10 ms instead, until the CONNACK.
                    if core.url.tls && !link.accepted {
                        wakeAt = min(wakeAt, now &+ 10_000_000)
                    } else {
                        events |= Int16(POLLOUT)
                    }
                }
                fds.append(pollfd(fd: socket, events: events, revents: 0))
            }
        } else if let reconnectAt {
            wakeAt = min(wakeAt, reconnectAt)
        }
        let timeout = wakeAt > now ? Int32(clamping: (wakeAt - now + 999_999) / 1_000_000) : 0
        if poll(&fds, nfds_t(fds.count), timeout) > 0, fds[0].revents != 0 {
            core.wakeFD.drain()
        }
        now = monotonicNanos()
        if let link {
            service(
                link, socketEvents: fds.count > 1 ? fds[1].revents : 0, inputWaited: readAt != nil, now: now)
        }
        return true
    }

    private func startAttempt(now: UInt64) {
        let url = core.url
        let newLink: Link
        do {
            newLink = try Link(core: core)
        } catch {
            attemptFailed(error, now: now)
            return
        }
        link = newLink
        attemptDeadline = now &+ core.options.connectTimeout.clampedNanoseconds
        subscribed = [:]
        subscriptionsVersion = -1
        // Blocks only for getaddrinfo(3): the TCP connection and TLS handshake go on in the loop.
        let result = cmqtt_connect_async(newLink.handle, url.host, Int32(url.port), keepAliveSeconds)
        let systemError = errno
        if result != MosquittoResult.success {
            attempt(failed: newLink.failure(result: result, systemError: systemError), now: now)
        } else {
            // On loopback the connection is often up at once, and a TLS ClientHello already sent.
            newLink.notePeer()
        }
    }

    /// libmosquitto accepts 0 (off) or 5...65535 seconds.
    private var keepAliveSeconds: Int32 {
        let seconds = core.options.keepAlive.components.seconds
        return Int32(clamping: min(max(seconds, 5), 65535))
    }

    /// Lets libmosquitto read, write and keep alive, then acts on what its callbacks reported.
    /// `inputWaited`: poll(2) was not asked about the socket's input (options.readDelay), so
    /// whatever came meanwhile is read now.
    private func service(_ link: Link, socketEvents: Int16, inputWaited: Bool, now: UInt64) {
        // loop_read also advances a TLS handshake, whichever way the socket became ready. On an
        // accepted plain TCP link there is nothing to read unless poll(2) said so (a wake-up by
        // the eventfd would cost a read(2) that finds nothing); OpenSSL may hold a record's bytes
        // the socket no longer shows, so a TLS link reads every turn.
        link.notePeer()
        var result = MosquittoResult.success
        if socketEvents != 0 || inputWaited || !link.accepted || core.url.tls {
            result = cmqtt_loop_read(link.handle, 1)
            lastRead = now
        }
        if result == MosquittoResult.success, cmqtt_want_write(link.handle) {
            result = cmqtt_loop_write(link.handle, 1)
        }
        if result == MosquittoResult.success { result = cmqtt_loop_misc(link.handle) }
        var systemError = errno
        if result == MosquittoResult.success, let (failure, error) = unnoticedFailure(link, socketEvents) {
            (result, systemError) = (failure, error)
        }

        if !link.accepted, let connack = link.connack {
            if connack == 0 {
                link.markAccepted()
                backoff = firstDelay
                core.linkAccepted()
            } else {
                var failure = link.failure(result: result, systemError: systemError)
                failure.connack = connack
                attempt(failed: failure, now: now)
                return
            }
        }
        if result != MosquittoResult.success || link.socket < 0 {
            let failure = link.failure(
                result: result == MosquittoResult.success ? MosquittoResult.connectionLost : result,
                systemError: systemError)
            if link.accepted {
                self.link = nil
                nextAttempt = now &+ backoff.clampedNanoseconds
                core.linkLost(reason: disconnectReason(failure))
            } else {
                attempt(failed: failure, now: now)
            }
            return
        }
        if !link.accepted, now >= attemptDeadline {
            attemptFailed(core.timeoutError(core.options.connectTimeout), now: now)
        }
    }

    /// During a TLS handshake libmosquitto takes OpenSSL's SSL_ERROR_SYSCALL for "try again", so
    /// a refused connection (or a peer that hangs up) would go unnoticed until the timeout, with
    /// poll(2) reporting it at once on every turn. The socket says what happened.
    private func unnoticedFailure(_ link: Link, _ events: Int16) -> (Int32, Int32)? {
        let socket = link.socket
        guard socket >= 0, events & Int16(POLLERR | POLLHUP | POLLIN) != 0 else { return nil }
        // Once a plain TCP link is up, read(2) reports an error or the end of the stream and
        // libmosquitto acts on it: a getsockopt(2) per packet received would add nothing.
        if link.accepted, !core.url.tls, events & Int16(POLLERR | POLLHUP) == 0 { return nil }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error != 0 {
            return (MosquittoResult.errno, error)
        }
        if events & Int16(POLLHUP | POLLERR) != 0 {
            // OpenSSL's write may have taken the error (ECONNREFUSED…) out of SO_ERROR: a socket
            // that never got a peer was refused or found no route; one that had a peer was closed
            // (a reset takes the peer away too: whether there was one is remembered).
            let connected = link.wasConnected
            return connected ? (MosquittoResult.connectionLost, 0) : (MosquittoResult.errno, ENOTCONN)
        }
        // Readable, yet OpenSSL read nothing: the end of the stream?
        if core.url.tls, !link.accepted, events & Int16(POLLIN) != 0 {
            var byte: UInt8 = 0
            if recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0 {
                return (MosquittoResult.connectionLost, 0)
            }
        }
        return nil
    }

    private func attempt(failed failure: LinkFailure, now: UInt64) {
        let url = core.url
        attemptFailed(
            MQTTError.connecting(to: url.address, clientID: core.options.clientID, tls: url.tls, failure),
            now: now)
    }

    /// The first attempt's error goes to connect(); a reconnection is tried again after the
    /// backoff, which doubles up to its upper bound.
    private func attemptFailed(_ error: MQTTError, now: UInt64) {
        link = nil
        if core.isFirstAttempt(generation: generation) {
            core.firstAttemptFailed(error, generation: generation)
            return
        }
        nextAttempt = now &+ backoff.clampedNanoseconds
        backoff = max(min(backoff * 2, core.options.reconnectDelay.upperBound), firstDelay)
    }

    /// Hands the link what the outbox has next (up to the window) and any new subscriptions.
    /// False when the link failed meanwhile (it is then gone).
    private func feed(_ link: Link) -> Bool {
        let (messages, subscriptions, version, handedNow) = core.takeForLink(
            subscriptionsAfter: subscriptionsVersion)
        handed = handedNow
        var published: [(sequence: UInt64, mid: Int32)] = []
        var rejected: [UInt64] = []
        var failure: Int32? = nil
        // Subscriptions first: a message published after a subscribe() (a request, a marker) may
        // be answered on that subscription, which must exist at the broker before it.
        if let subscriptions {
            subscriptionsVersion = version
            for (filter, qos) in subscriptions where subscribed[filter] != qos {
                let result =
                    filter.utf8.contains(0)
                    ? Int32(MOSQ_ERR_INVAL.rawValue)
                    : cmqtt_subscribe(link.handle, nil, filter, qos.rawValue)
                if MosquittoResult.meansLinkLost(result) {
                    failure = result
                    break
                }
                // A filter libmosquitto refuses (bad wildcard) is not retried on every turn.
                subscribed[filter] = qos
            }
        }
        // Several messages (a measurement and its bpm, or what waited for a reconnection) leave
        // in as few segments as they fit: libmosquitto writes each with a write(2) of its own,
        // which with TCP_NODELAY would be a segment each, and on loopback each segment costs the
        // kernel a receive on the broker's side and a wake-up of the broker.
        let corked = messages.count > 1 && link.socket >= 0 && cmqtt_tcp_cork(link.socket, 1) == 0
        for (sequence, message) in messages where failure == nil {
            var mid: Int32 = 0
            // A NUL would cut the topic short in C: another topic than the one asked for.
            let result =
                message.topic.utf8.contains(0)
                ? Int32(MOSQ_ERR_INVAL.rawValue)
                : message.payload.withUnsafeBytes { bytes in
                    cmqtt_publish(
                        link.handle, &mid, message.topic, Int32(clamping: bytes.count), bytes.baseAddress,
                        message.qos.rawValue, message.retain)
                }
            if result == MosquittoResult.success {
                published.append((sequence, mid))
            } else if MosquittoResult.meansLinkLost(result) {
                failure = result
                break
            } else {
                rejected.append(sequence)
            }
        }
        // What a failed call left, before the uncork's setsockopt(2) can change it.
        let systemError = errno
        // Uncorked, what waits goes at once; on the socket, unless libmosquitto closed it (-1).
        if corked, link.socket >= 0 { _ = cmqtt_tcp_cork(link.socket, 0) }
        core.recordPublished(published, rejected: rejected)

        guard let failure else { return true }
        self.link = nil
        nextAttempt = monotonicNanos() &+ backoff.clampedNanoseconds
        core.linkLost(reason: disconnectReason(link.failure(result: failure, systemError: systemError)))
        return false
    }

    /// DISCONNECT, so that the broker does not publish the will, written within half a second.
    private func sayGoodbye(_ link: Link) {
        guard cmqtt_disconnect(link.handle) == MosquittoResult.success else { return }
        let until = monotonicNanos() &+ 500_000_000
        while link.socket >= 0, cmqtt_want_write(link.handle), monotonicNanos() < until {
            var output = pollfd(fd: link.socket, events: Int16(POLLOUT), revents: 0)
            _ = poll(&output, 1, 20)
            if cmqtt_loop_write(link.handle, 1) != MosquittoResult.success { break }
        }
    }
}
