/// A Bluetooth adapter (`org.bluez.Adapter1`).
public struct Adapter: Sendable, Equatable {
    /// `hci0`.
    public let name: String
    public let path: AdapterPath
    public let address: BluetoothAddress?
    public let alias: String?
    public let powered: Bool
    public let discovering: Bool
    /// Blocked through rfkill (`PowerState` `off-blocked`, BlueZ 5.66 and later): no power-on will
    /// work until it is unblocked.
    public var blocked: Bool = false
}
