import DBus

#if canImport(Glibc)
    import Glibc
#endif

/// What a served characteristic hands bluetoothd when it asks by `AcquireNotify` (BlueZ does
/// when the characteristic has a `NotifyAcquired` property): one end of a SEQPACKET socket pair.
/// Each value hrm writes to its end is one notification to every central that subscribed, with
/// no D-Bus message and no dbus-daemon on the way. bluetoothd closes its end when the last
/// central unsubscribes or leaves: a watcher thread sees the hang-up and says so (`ended`).
///
/// hrm writes to a duplicate of the end the watcher reads, under its owner's lock, so that a
/// descriptor number closed and reused meanwhile is never written to.
final class ServedNotifySocket: Sendable {
    /// The descriptor values are sent on (non-blocking sends only).
    let sending: Int32
    private let watcher: DatagramReader

    /// A new pair: returns the socket and bluetoothd's end (for the reply, which closes it once
    /// sent). `ended` runs once, on the watcher's thread, when bluetoothd lets go.
    static func make(ended: @escaping @Sendable () -> Void) throws(DBusError) -> (
        ServedNotifySocket, theirs: Int32
    ) {
        var pair: [Int32] = [-1, -1]
        guard
            socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
        else {
            throw DBusError(name: Self.failed, message: "socketpair: \(String(cString: strerror(errno)))")
        }
        let (ours, theirs) = (pair[0], pair[1])
        let sending = fcntl(ours, F_DUPFD_CLOEXEC, 0)
        guard sending >= 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(ours)
            Glibc.close(theirs)
            throw DBusError(name: Self.failed, message: "dup: \(reason)")
        }
        do {
            // bluetoothd never writes to this socket: the watcher only waits for its hang-up.
            let watcher = try DatagramReader(
                socket: ours, mtu: 23, threadName: "hrm-relay", deliver: { _ in }, end: { _ in ended() })
            return (ServedNotifySocket(sending: sending, watcher: watcher), theirs)
        } catch {
            Glibc.close(sending)
            Glibc.close(theirs)
            throw DBusError(name: Self.failed, message: error.message)
        }
    }

    private static let failed: ErrorName = "org.bluez.Error.Failed"

    private init(sending: Int32, watcher: DatagramReader) {
        self.sending = sending
        self.watcher = watcher
    }

    /// Sends one value as one datagram, never waiting: false when bluetoothd's end is full or gone.
    func send(_ value: [UInt8]) -> Bool {
        value.withUnsafeBytes {
            Glibc.send(sending, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        } >= 0
    }

    /// Lets go of the socket: bluetoothd sees the hang-up. Call once, after the owner forgot it.
    func close() {
        watcher.stop()
        Glibc.close(sending)
    }
}
