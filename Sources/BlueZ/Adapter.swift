/// A Bluetooth adapter (`org.bluez.Adapter1`).
public struct Adapter: Sendable, Equatable {
    /// `hci0`.
    public let name: String
    /// `/org/bluez/hci0`.
    public let path: AdapterPath
    /// The controller's address; nil when bluetoothd has not given one.
    public let address: BluetoothAddress?
    /// The name the adapter shows to others (`Alias`, by default the host name).
    public let alias: String?
    /// `Powered`, as bluetoothd last said.
    public let powered: Bool
    /// `Discovering`: a discovery (of any client) is running.
    public let discovering: Bool
    /// Blocked through rfkill (`PowerState` `off-blocked`, BlueZ 5.66 and later): no power-on will
    /// work until it is unblocked.
    public var blocked: Bool = false
}
