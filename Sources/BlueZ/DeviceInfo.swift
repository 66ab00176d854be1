import DBus

/// What a connected device says about itself, read once after connecting.
public struct DeviceInfo: Sendable, Equatable {
    public var name: String?
    /// The Body Sensor Location byte (0x2A38), nil when the device has no such characteristic.
    public var bodySensorLocation: UInt8?
    /// Percent, from org.bluez.Battery1 or else GATT 0x2A19.
    public var battery: Int?
    public var manufacturer: String?
    public var model: String?
    public var serial: String?
    public var firmware: String?
}

extension BlueZClient {
    /// Reads the device's name, Body Sensor Location, battery and Device Information strings.
    /// A characteristic that is missing or fails to read is simply absent.
    public func info(_ devicePath: DevicePath) async -> DeviceInfo {
        let path = devicePath.objectPath
        var info = DeviceInfo()
        let device = mirror.properties(path, Self.deviceInterface)
        if case .string(let name)? = device?["Name"] {
            info.name = name
        } else if case .string(let alias)? = device?["Alias"] {
            info.name = alias
        }
        let characteristics = characteristics(of: devicePath)
        func find(_ uuid: UInt16) -> Characteristic? {
            characteristics.first { $0.uuid == BluetoothUUID(uuid) }
        }
        if let location = find(0x2A38), let bytes = try? await read(location) {
            info.bodySensorLocation = bytes.first
        }
        if case .byte(let percent)? = mirror.properties(path, Self.batteryInterface)?["Percentage"] {
            info.battery = Int(percent)
        } else if let level = find(0x2A19), let bytes = try? await read(level), let first = bytes.first,
            first <= 100
        {
            info.battery = Int(first)
        }
        func text(_ uuid: UInt16) async -> String? {
            guard let characteristic = find(uuid), let bytes = try? await read(characteristic) else {
                return nil
            }
            let value = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            return value.isEmpty ? nil : value
        }
        info.manufacturer = await text(0x2A29)
        info.model = await text(0x2A24)
        info.serial = await text(0x2A25)
        info.firmware = await text(0x2A26)
        return info
    }
}
