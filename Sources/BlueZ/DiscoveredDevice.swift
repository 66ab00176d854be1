import DBus

/// A device as discovery reports it (`org.bluez.Device1`).
public struct DiscoveredDevice: Sendable, Equatable {
    /// `Address`.
    public let address: BluetoothAddress
    /// `public` or `random`.
    public let addressType: String?
    /// The advertised (or, once connected, GAP) name; nil when the device sent none.
    public let name: String?
    /// bluetoothd's alias: the name, or the address with dashes.
    public let alias: String?
    /// dBm; nil when unknown (absent, or 127 as controllers without RSSI report).
    public let rssi: Int?
    /// The service UUIDs advertised (or, once connected, resolved); empty when none are known.
    public let uuids: [BluetoothUUID]
    /// GAP Appearance (0x0341 is a heart-rate belt); nil when not advertised.
    public let appearance: UInt16?
    /// Manufacturer-specific advertising data by company identifier; empty when none.
    public let manufacturerData: [UInt16: [UInt8]]
    /// `Connected`: whether bluetoothd holds a link to the device (for any client).
    public let connected: Bool
    /// The device's object path.
    public let path: DevicePath
    /// The adapter the device was seen by.
    public let adapterPath: AdapterPath

    init?(path: ObjectPath, properties: [String: Value]) {
        guard case .string(let addressText)? = properties["Address"],
            let address = BluetoothAddress(addressText)
        else {
            return nil
        }
        func string(_ key: String) -> String? { if case .string(let s)? = properties[key] { s } else { nil } }
        self.address = address
        addressType = string("AddressType")
        name = string("Name")
        alias = string("Alias")
        if case .int16(let value)? = properties["RSSI"], value != 127 {
            rssi = Int(value)
        } else {
            rssi = nil
        }
        if case .array(.string, let items)? = properties["UUIDs"] {
            uuids = items.compactMap { if case .string(let s) = $0 { BluetoothUUID(s) } else { nil } }
        } else {
            uuids = []
        }
        if case .uint16(let value)? = properties["Appearance"] {
            appearance = value
        } else {
            appearance = nil
        }
        var data: [UInt16: [UInt8]] = [:]
        if case .dictionary(_, _, let entries)? = properties["ManufacturerData"] {
            for entry in entries {
                if case .uint16(let company) = entry.key, case .bytes(let bytes) = entry.value.unwrapped {
                    data[company] = bytes
                }
            }
        }
        manufacturerData = data
        if case .boolean(let value)? = properties["Connected"] {
            connected = value
        } else {
            connected = false
        }
        self.path = DevicePath(path)
        if case .objectPath(let adapter)? = properties["Adapter"] {
            adapterPath = AdapterPath(adapter)
        } else {
            adapterPath = AdapterPath(path.parent ?? .root)
        }
    }

    /// The name to show: Name, else Alias unless it is only the address.
    public var displayName: String? {
        name ?? alias.flatMap { BluetoothAddress($0) == nil ? $0 : nil }
    }
}
