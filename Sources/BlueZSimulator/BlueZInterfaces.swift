import DBus

/// org.bluez names and the errors bluetoothd 5.66 answers with (names and messages as it sends them).
enum BlueZName {
    static let service: BusName = "org.bluez"
    static let root: ObjectPath = "/org/bluez"
    static let agentManager: InterfaceName = "org.bluez.AgentManager1"
    static let adapter: InterfaceName = "org.bluez.Adapter1"
    static let device: InterfaceName = "org.bluez.Device1"
    static let battery: InterfaceName = "org.bluez.Battery1"
    static let gattService: InterfaceName = "org.bluez.GattService1"
    static let gattCharacteristic: InterfaceName = "org.bluez.GattCharacteristic1"
    static let gattDescriptor: InterfaceName = "org.bluez.GattDescriptor1"
}

enum BlueZError {
    static func failed(_ message: String) -> DBusError {
        DBusError(name: "org.bluez.Error.Failed", message: message)
    }
    static let notReady = DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
    /// Powering on an adapter blocked through rfkill (5.66: mgmt_errstr(MGMT_STATUS_RFKILLED)).
    static let blocked = DBusError(name: "org.bluez.Error.Blocked", message: "Blocked through rfkill")
    static let inProgress = DBusError(name: "org.bluez.Error.InProgress", message: "In Progress")
    /// A second Connect() of a device whose first is pending, in 5.66: device_connect_le finds
    /// its ATT connect under way (-EALREADY), dev_connect answers btd_error_failed(strerror).
    /// (BlueZ 5.82 and later answer InProgress, "In Progress": commit 1c2ec2990.)
    static let connectAlreadyPending = DBusError(
        name: "org.bluez.Error.Failed", message: "Operation already in progress")
    /// A pending Connect() that a Disconnect() cancelled (ERR_BREDR_CONN_CANCELED, for LE too).
    static let connectCanceled = DBusError(name: "org.bluez.Error.Failed", message: "br-connection-canceled")
    static let alreadyInProgress = DBusError(
        name: "org.bluez.Error.InProgress", message: "Operation already in progress")
    static let notPermittedRead = DBusError(
        name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
    static let notPermittedWrite = DBusError(
        name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
    static let notPermittedAcquired = DBusError(
        name: "org.bluez.Error.NotPermitted", message: "Notify acquired")
    static let notSupported = DBusError(
        name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
    static let notConnected = DBusError(name: "org.bluez.Error.NotConnected", message: "Not Connected")
    static let invalidArguments = DBusError(
        name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call")
    static let doesNotExist = DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
    static let alreadyExists = DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
    /// Pair() of a device paired but not bonded: the kernel's MGMT_STATUS_ALREADY_PAIRED.
    static let alreadyPaired = DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Paired")
    /// The pairing outcomes of 5.66's new_authentication_return (src/device.c).
    static let authenticationFailed = DBusError(
        name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
    static let authenticationRejected = DBusError(
        name: "org.bluez.Error.AuthenticationRejected", message: "Authentication Rejected")
    static let authenticationTimeout = DBusError(
        name: "org.bluez.Error.AuthenticationTimeout", message: "Authentication Timeout")
    static let authenticationCanceled = DBusError(
        name: "org.bluez.Error.AuthenticationCanceled", message: "Authentication Canceled")
    /// An ATT request on an unencrypted link refused for insufficient authentication or
    /// encryption (create_gatt_dbus_error in 5.66's src/gatt-client.c).
    static let notPaired = DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired")
}

extension Value {
    /// `a{qv}` with byte-array values: ManufacturerData.
    static func manufacturerData(_ entries: [(UInt16, [UInt8])]) -> Value {
        .dictionary(
            key: .uint16, value: .variant,
            entries.sorted { $0.0 < $1.0 }.map { DictEntry(.uint16($0.0), .variant(.bytes($0.1))) })
    }

    /// An empty `a{sv}`.
    static var emptyOptions: Value { .propertyMap([:]) }
}
