import DBus

/// What went wrong talking to bluetoothd, with a stable code hrm maps to exit statuses
/// (unavailable 69, permission 77, not found 1) and to JSON `error` events.
public struct BlueZError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; the raw value is the stable identifier of JSON `error` events.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Nobody owns org.bluez: bluetoothd is not running (or not installed).
        case bluetoothdNotRunning = "bluetoothd_not_running"
        /// There is no system bus to connect to: dbus-daemon (or dbus-broker) is not running.
        case noSystemBus = "no_system_bus"
        /// The D-Bus policy refuses this user (not in the `bluetooth` group).
        case accessDenied = "access_denied"
        /// bluetoothd runs but has no adapter at all.
        case noAdapter = "no_adapter"
        /// No adapter with the name or address asked for.
        case adapterNotFound = "adapter_not_found"
        /// The adapter is powered off (org.bluez.Error.NotReady).
        case adapterPoweredOff = "adapter_powered_off"
        /// The adapter is blocked through rfkill: powering it on cannot work until it is unblocked.
        case adapterBlocked = "adapter_blocked"
        /// The device asked for was not seen (not advertising within the scan's time), or went away.
        case deviceNotFound = "device_not_found"
        /// A call or a wait ran out of time.
        case timeout
        /// The bus connection is gone.
        case disconnected
        /// Any other org.bluez.Error.*: `dbusName` and `message` say which.
        case bluez = "bluez_error"
        /// Any other D-Bus failure.
        case dbus = "dbus_error"
        /// A path given as text is not a valid D-Bus object path.
        case invalidPath = "invalid_path"
        /// The task waiting for the call was cancelled (Ctrl-C): a stop, not a failure.
        case cancelled
        /// The adapter offers no LE peripheral role: no `GattManager1` or `LEAdvertisingManager1`.
        case peripheralUnsupported = "peripheral_unsupported"
        /// bluetoothd refused to register a GATT application or an advertisement ("Maximum
        /// advertisements reached", an application it cannot parse): `message` says which.
        case peripheralRefused = "peripheral_refused"
        /// Pairing with the device was refused, timed out or could not be done: `message` says
        /// which.
        case pairingFailed = "pairing_failed"
    }

    /// What went wrong.
    public let code: Code
    /// What went wrong in words, naming the call that failed when there is one.
    public let message: String
    /// The D-Bus error name behind it, when there is one.
    public let dbusName: String?
    /// bluetoothd's reply, when the error is one of its `org.bluez.Error.*`.
    public var reply: BlueZReply? { dbusName.flatMap(BlueZReply.init(errorName:)) }

    /// An error of `code` saying `message`; `dbusName` is the D-Bus error name behind it, if any.
    public init(_ code: Code, _ message: String, dbusName: String? = nil) {
        self.code = code
        self.message = message
        self.dbusName = dbusName
    }

    /// A Connect that failed in a way that is routine on real controllers and worth a retry once
    /// Connected has gone false: InProgress, or Failed with `le-connection-abort-by-local`.
    public var isRoutineConnectFailure: Bool {
        switch reply {
        case .inProgress: true
        case .failed: message.contains("le-connection-abort-by-local")
        default: false
        }
    }

    /// A Connect refused because a Connect of the same device is already pending: another
    /// program's, since hrm's own are one at a time. bluetoothd 5.66 answers Failed "Operation
    /// already in progress" (its ATT connect under way); 5.82 and later, InProgress.
    public var isAnotherConnectPending: Bool {
        switch reply {
        case .inProgress: true
        case .failed: message.contains("Operation already in progress")
        default: false
        }
    }

    /// The message.
    public var description: String { message }

    /// Maps a D-Bus failure to what it means for a Bluetooth client. `call` names the method
    /// that failed (`Connect`), so that a timeout or a refusal says which call it was.
    init(_ error: DBusError, call: String? = nil, timeout: Duration? = nil) {
        let name = error.name.rawValue
        let what = call.map { "\($0) " } ?? ""
        switch error.code {
        case .serviceUnknown, .nameHasNoOwner:
            self.init(
                .bluetoothdNotRunning, "bluetoothd is not running (nobody owns org.bluez on the system bus)",
                dbusName: name)
        case .accessDenied:
            let refused = call.map { "call \($0) on" } ?? "talk to"
            self.init(
                .accessDenied,
                "the D-Bus policy does not let this user \(refused) bluetoothd (is the user in the 'bluetooth' group?)",
                dbusName: name)
        case .noReply:
            let limit = timeout.map { "within \(Self.seconds($0))" } ?? "in time"
            self.init(.timeout, "bluetoothd did not answer \(what)\(limit): \(error.message)", dbusName: name)
        case .disconnected, .connectionFailed:
            self.init(
                .disconnected, "lost the connection to the system bus: \(error.message)", dbusName: name)
        case .cancelled:
            self.init(.cancelled, "\(what)cancelled", dbusName: name)
        default:
            if BlueZReply(errorName: name) == .notReady {
                self.init(.adapterPoweredOff, "the adapter is powered off", dbusName: name)
            } else if name.hasPrefix(BlueZNames.errorPrefix) {
                let reason = "\(name.dropFirst(BlueZNames.errorPrefix.count)): \(error.message)"
                self.init(.bluez, call.map { "\($0) failed: \(reason)" } ?? reason, dbusName: name)
            } else {
                self.init(
                    .dbus, "\(what.isEmpty ? "" : "\(what)failed: ")\(name): \(error.message)", dbusName: name
                )
            }
        }
    }

    /// `20 s`, `2.5 s`.
    static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        let tenths = fraction / 100_000_000_000_000_000
        return tenths == 0 ? "\(whole) s" : "\(whole).\(tenths) s"
    }

    /// bluetoothd left the bus while a call waited for its answer.
    static func wentAway(during call: String, _ error: DBusError) -> BlueZError {
        BlueZError(
            .bluetoothdNotRunning, "bluetoothd went away during \(call) (nobody owns org.bluez any more)",
            dbusName: error.name.rawValue)
    }
}
