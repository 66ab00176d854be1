import DBus

/// What a connected device says about itself, read once after connecting.
public struct DeviceInfo: Sendable, Equatable {
    /// `Name`, else `Alias` of `org.bluez.Device1`; nil when bluetoothd has neither.
    public var name: String?
    /// The Body Sensor Location byte (0x2A38), nil when the device has no such characteristic.
    public var bodySensorLocation: UInt8?
    /// Percent, from org.bluez.Battery1 or else GATT 0x2A19.
    public var battery: Int?
    /// Manufacturer Name String (0x2A29); nil when absent, unread or empty.
    public var manufacturer: String?
    /// Model Number String (0x2A24); nil when absent, unread or empty.
    public var model: String?
    /// Serial Number String (0x2A25); nil when absent, unread or empty.
    public var serial: String?
    /// Firmware Revision String (0x2A26); nil when absent, unread or empty.
    public var firmware: String?
    /// What the device has but did not give (a read that failed or did not answer in time), in
    /// words: `Model Number String (0x2A24): bluetoothd did not answer ReadValue within 3 s`.
    public var unread: [String] = []
}

/// One characteristic's read, as a child task of `info` hands it back.
private struct InfoRead: Sendable {
    let uuid: UInt16
    let value: Result<[UInt8], BlueZError>
}

extension BlueZClient {
    /// The characteristics `info` reads, with their names for people.
    private static let infoCharacteristics: [(uuid: UInt16, name: String)] = [
        (0x2A38, "Body Sensor Location"), (0x2A19, "Battery Level"), (0x2A29, "Manufacturer Name String"),
        (0x2A24, "Model Number String"), (0x2A25, "Serial Number String"),
        (0x2A26, "Firmware Revision String"),
    ]

    /// Reads the device's name, Body Sensor Location, battery and Device Information strings, all
    /// at once, each within `timeout`: a strap that does not answer one delays the rest by no
    /// more than that. A characteristic the device lacks is simply absent; one it has but did not
    /// give is named in `unread`.
    public func info(_ devicePath: DevicePath, timeout: Duration = .seconds(3)) async -> DeviceInfo {
        let path = devicePath.objectPath
        var info = DeviceInfo()
        let device = mirror.properties(path, Self.deviceInterface)
        if case .string(let name)? = device?["Name"] {
            info.name = name
        } else if case .string(let alias)? = device?["Alias"] {
            info.name = alias
        }
        var batteryFromBlueZ: Int? = nil
        if case .byte(let percent)? = mirror.properties(path, Self.batteryInterface)?["Percentage"] {
            batteryFromBlueZ = Int(percent)
        }
        let present = characteristics(of: devicePath)
        let wanted = Self.infoCharacteristics.compactMap { entry -> (UInt16, String, Characteristic)? in
            if entry.uuid == 0x2A19 && batteryFromBlueZ != nil { return nil }
            return present.first { $0.uuid == BluetoothUUID(entry.uuid) }.map { (entry.uuid, entry.name, $0) }
        }
        let values = await withTaskGroup(of: InfoRead.self) { group in
            for (uuid, _, characteristic) in wanted {
                group.addTask {
                    // The value is bound before the result is built: Swift 6.3.1's optimiser loses
                    // the uuid of `return (uuid, .success(try await read(...)))` in a child task
                    // (the release build read every value and filed them under 0).
                    let value: Result<[UInt8], BlueZError>
                    do throws(BlueZError) {
                        let bytes = try await self.read(characteristic, timeout: timeout)
                        value = .success(bytes)
                    } catch {
                        value = .failure(error)
                    }
                    return InfoRead(uuid: uuid, value: value)
                }
            }
            var values: [UInt16: Result<[UInt8], BlueZError>] = [:]
            for await read in group { values[read.uuid] = read.value }
            return values
        }
        func text(_ uuid: UInt16) -> String? {
            guard case .success(let bytes)? = values[uuid] else { return nil }
            let value = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            return value.isEmpty ? nil : value
        }
        if case .success(let bytes)? = values[0x2A38] { info.bodySensorLocation = bytes.first }
        info.battery = batteryFromBlueZ
        if case .success(let bytes)? = values[0x2A19], let first = bytes.first, first <= 100 {
            info.battery = Int(first)
        }
        info.manufacturer = text(0x2A29)
        info.model = text(0x2A24)
        info.serial = text(0x2A25)
        info.firmware = text(0x2A26)
        for (uuid, name, _) in wanted {
            if case .failure(let error)? = values[uuid] {
                let hex = String(uuid, radix: 16, uppercase: true)
                info.unread.append("\(name) (0x\(hex)): \(error.message)")
            }
        }
        return info
    }
}
