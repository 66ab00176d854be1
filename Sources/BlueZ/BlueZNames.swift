import DBus

/// Every name hrm uses on bluetoothd's side of the bus, once (BlueZ 5.66, `doc/*-api.txt`).
enum BlueZNames {
    static let service: BusName = "org.bluez"
    /// The root of bluetoothd's objects (adapters are `/org/bluez/hciN`).
    static let root: ObjectPath = "/org/bluez"

    /// Interface names as the object mirror keys them.
    enum Interface {
        static let adapter = "org.bluez.Adapter1"
        static let device = "org.bluez.Device1"
        static let service = "org.bluez.GattService1"
        static let characteristic = "org.bluez.GattCharacteristic1"
        static let descriptor = "org.bluez.GattDescriptor1"
        static let battery = "org.bluez.Battery1"
    }

    /// The same, as calls take them.
    enum Call {
        static let adapter: InterfaceName = "org.bluez.Adapter1"
        static let device: InterfaceName = "org.bluez.Device1"
        static let characteristic: InterfaceName = "org.bluez.GattCharacteristic1"
        static let gattManager: InterfaceName = "org.bluez.GattManager1"
        static let advertisingManager: InterfaceName = "org.bluez.LEAdvertisingManager1"
        static let advertisement: InterfaceName = "org.bluez.LEAdvertisement1"
        static let gattService: InterfaceName = "org.bluez.GattService1"
        static let descriptor: InterfaceName = "org.bluez.GattDescriptor1"
        static let agentManager: InterfaceName = "org.bluez.AgentManager1"
        static let agent: InterfaceName = "org.bluez.Agent1"
    }

    /// Interface names of the peripheral side, as the object mirror keys them.
    enum Peripheral {
        static let gattManager = "org.bluez.GattManager1"
        static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    }

    /// The prefix of bluetoothd's error names (`org.bluez.Error.InProgress`).
    static let errorPrefix = "org.bluez.Error."
}

/// The `org.bluez.Error.*` replies bluetoothd gives, as a client meets them.
public enum BlueZReply: String, Sendable, CaseIterable {
    /// Another operation of the same kind is running: a Connect, a discovery, a StartNotify of
    /// another client (AcquireNotify). Routine: retry.
    case inProgress = "InProgress"
    /// The adapter is powered off.
    case notReady = "NotReady"
    /// Anything else; the message says what (`le-connection-abort-by-local`, an ATT error).
    case failed = "Failed"
    /// The attribute does not allow the operation (a read of a write-only value); also, briefly, a
    /// StartNotify after this client released an AcquireNotify socket.
    case notPermitted = "NotPermitted"
    /// The object does not support the operation (StartNotify on a characteristic without notify).
    case notSupported = "NotSupported"
    /// The device requires authorisation (pairing) for the attribute.
    case notAuthorized = "NotAuthorized"
    /// What was asked for is not available now.
    case notAvailable = "NotAvailable"
    /// The device is not connected: GATT operations need a connection.
    case notConnected = "NotConnected"
    /// The device, or the profile asked for, is connected already.
    case alreadyConnected = "AlreadyConnected"
    /// The thing to create or register exists already.
    case alreadyExists = "AlreadyExists"
    /// The object or entry named does not exist (any more).
    case doesNotExist = "DoesNotExist"
    /// An argument is malformed or out of range (a discovery filter, a write's options).
    case invalidArguments = "InvalidArguments"
    /// A write's value has a length the attribute does not accept (ATT error 0x0D).
    case invalidValueLength = "InvalidValueLength"
    /// A read or write offset beyond the attribute's value (ATT error 0x07).
    case invalidOffset = "InvalidOffset"
    /// Pairing or encryption with the device failed.
    case authenticationFailed = "AuthenticationFailed"
    /// The device (or the agent) refused pairing.
    case authenticationRejected = "AuthenticationRejected"
    /// Pairing was cancelled (CancelPairing, or the agent's Cancel).
    case authenticationCanceled = "AuthenticationCanceled"
    /// The device did not answer pairing in time.
    case authenticationTimeout = "AuthenticationTimeout"

    /// The reply an error name stands for; nil for a name that is not bluetoothd's (or one this
    /// list does not know: it is still a `.bluez` error with its name kept).
    public init?(errorName: String) {
        guard errorName.hasPrefix(BlueZNames.errorPrefix) else { return nil }
        self.init(rawValue: String(errorName.dropFirst(BlueZNames.errorPrefix.count)))
    }
}
