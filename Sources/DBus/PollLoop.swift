internal import CDBus
internal import CDBusShims
internal import Glibc
import Synchronization
internal import Threads

// The loop thread's poll loop: it runs queued jobs, dispatches what libdbus has read, sleeps in
// poll(2) on the eventfd and libdbus's watch fds until the next libdbus timeout or call deadline,
// and on shutdown fails what is in flight and releases the connection.

extension Core {
    /// The loop itself: runs on the loop thread from the connection's start until it is released.
    func run() {
        assertOnLoopThread()
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            connection,
            { watch, data in
                guard let watch, let data else { return 0 }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().watches.append(watch)
                return 1
            },
            { watch, data in
                guard let watch, let data else { return }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().watches.removeAll { $0 == watch }
            },
            { _, _ in },  // enabled state is read before every poll
            me, nil)
        dbus_connection_set_timeout_functions(
            connection,
            { timeout, data in
                guard let timeout, let data else { return 0 }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().armTimeout(timeout)
                return 1
            },
            { timeout, data in
                guard let timeout, let data else { return }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().timeouts[timeout] = nil
            },
            { timeout, data in
                guard let timeout, let data else { return }
                Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().armTimeout(timeout)
            },
            me, nil)
        // libdbus asks for a wake-up after queueing outgoing data it could not write at once: on the
        // loop thread a flag that skips the next sleep is enough, from elsewhere the eventfd.
        dbus_connection_set_wakeup_main_function(
            connection,
            { data in
                guard let data else { return }
                let core = Unmanaged<Core>.fromOpaque(data).takeUnretainedValue()
                if core.onLoopThread { core.needsIteration = true } else { core.wakeLoop() }
            }, me, nil)
        dbus_connection_add_filter(
            connection,
            { _, message, data in
                guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
                return Unmanaged<Core>.fromOpaque(data).takeUnretainedValue().handle(message)
            }, me, nil)

        var pollFDs: [pollfd] = []
        var polled: [OpaquePointer] = []
        while open {
            runJobs()
            dispatchAll()
            if !open { break }
            if dbus_connection_get_is_connected(connection) == 0 {
                // The Disconnected message is queued by libdbus; dispatch it once more.
                dispatchAll()
                if open { shutdown(DBusError(.disconnected, "the bus closed the connection")) }
                break
            }

            pollFDs.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakeFD.descriptor, events: Int16(POLLIN), revents: 0))
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
                if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
                pollFDs.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polled.append(watch)
            }
            var timeoutMs = pollTimeout()
            let mayBlock = inbox.withLock { state -> Bool in
                if !state.jobs.isEmpty { return false }
                state.sleeping = true
                return true
            }
            if !mayBlock || needsIteration { timeoutMs = 0 }
            needsIteration = false
            let n = poll(&pollFDs, nfds_t(pollFDs.count), timeoutMs)
            inbox.withLock {
                $0.sleeping = false
                $0.signalled = false
            }
            if n > 0 {
                if pollFDs[0].revents != 0 { wakeFD.drain() }
                for (i, watch) in polled.enumerated() {
                    let revents = pollFDs[i + 1].revents
                    guard revents != 0, watches.contains(watch) else { continue }
                    var flags: UInt32 = 0
                    if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
                    if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
                    if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
                    if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
                    dbus_watch_handle(watch, flags)
                }
            }
            fireTimeouts()
        }
        teardown()
    }

    private func runJobs() {
        assertOnLoopThread()
        while true {
            let jobs = inbox.withLock { state -> [@Sendable () -> Void] in
                let jobs = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                return jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { job() }
        }
    }

    private func dispatchAll() {
        assertOnLoopThread()
        while dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
            dbus_connection_dispatch(connection)
        }
    }

    private func armTimeout(_ timeout: OpaquePointer) {
        assertOnLoopThread()
        if dbus_timeout_get_enabled(timeout) != 0 {
            timeouts[timeout] =
                monotonicNanos() + UInt64(max(0, dbus_timeout_get_interval(timeout))) * 1_000_000
        } else {
            timeouts[timeout] = nil
        }
    }

    private func pollTimeout() -> Int32 {
        assertOnLoopThread()
        var next = UInt64.max
        for (_, deadline) in timeouts { next = min(next, deadline) }
        if let deadline = nextCallDeadline() { next = min(next, deadline) }
        if next == .max { return -1 }
        let now = monotonicNanos()
        if next <= now { return 0 }
        // Round up so we never wake just before a deadline.
        return Int32(min((next - now + 999_999) / 1_000_000, 86_400_000))
    }

    private func fireTimeouts() {
        assertOnLoopThread()
        let now = monotonicNanos()
        for (timeout, deadline) in timeouts where deadline <= now {
            guard timeouts[timeout] != nil else { continue }
            armTimeout(timeout)
            dbus_timeout_handle(timeout)
        }
        expireCalls(now: now)
    }

    /// Fails everything in flight, finishes every stream and closes the libdbus connection.
    func shutdown(_ reason: DBusError) {
        assertOnLoopThread()
        guard open else { return }
        open = false
        closeReason = reason
        isOpen.store(false, ordering: .releasing)
        let waiting = closeCalls(reason)
        dbus_connection_close(connection)
        for call in waiting { call.completion(.failure(reason)) }
        finishAllSubscriptions()
        objects.withLock { $0 = ObjectTree() }
    }

    private func teardown() {
        assertOnLoopThread()
        // Jobs queued after the loop stopped still run, so every waiter gets its answer.
        inbox.withLock { $0.stopped = true }
        runJobs()
        dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_wakeup_main_function(connection, nil, nil, nil)
        // Drain whatever libdbus still has queued so its messages are released.
        dispatchAllAfterClose()
        dbus_connection_unref(connection)
        wakeFD.close()
        let waiters = finished.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    private func dispatchAllAfterClose() {
        assertOnLoopThread()
        while let message = dbus_connection_pop_message(connection) { dbus_message_unref(message) }
    }
}
