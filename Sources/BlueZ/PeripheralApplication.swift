/// A characteristic a peripheral of hrm's serves (a GATT server characteristic on bluetoothd's
/// behalf): its UUID, what a central may do with it, and its first value.
public struct ServedCharacteristic: Sendable {
    /// What a central may do (`Flags` of `org.bluez.GattCharacteristic1`).
    public enum Flag: String, Sendable {
        /// ReadValue.
        case read
        /// StartNotify: values are pushed by `Peripheral.notify`.
        case notify
    }

    /// The characteristic's UUID (0x2A37).
    public let uuid: BluetoothUUID
    /// What a central may do.
    public let flags: [Flag]
    /// What a read gets until `Peripheral.notify` or `update` changes it.
    public let value: [UInt8]

    /// A characteristic of `uuid` with `flags`, holding `value`.
    public init(_ uuid: BluetoothUUID, flags: [Flag], value: [UInt8] = []) {
        self.uuid = uuid
        self.flags = flags
        self.value = value
    }
}

/// A primary service a peripheral of hrm's serves, with its characteristics.
public struct ServedService: Sendable {
    /// The service's UUID (0x180D).
    public let uuid: BluetoothUUID
    /// Its characteristics, in handle order.
    public let characteristics: [ServedCharacteristic]

    /// A primary service of `uuid`.
    public init(_ uuid: BluetoothUUID, characteristics: [ServedCharacteristic]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// What a peripheral of hrm's advertises (`org.bluez.LEAdvertisement1`, `Type` peripheral,
/// discoverable).
public struct AdvertisementSettings: Sendable, Equatable {
    /// The most bytes of an advertising packet's payload (legacy advertising).
    public static let packetBytes = 31

    /// `LocalName`.
    public let localName: String
    /// `ServiceUUIDs`, short ones first.
    public let serviceUUIDs: [BluetoothUUID]
    /// `Appearance` (0x0341: a heart-rate belt); nil for none.
    public let appearance: UInt16?

    /// Settings as given; `localName` is cut to what fits beside the rest (see `fittingName`).
    public init(localName: String, serviceUUIDs: [BluetoothUUID], appearance: UInt16? = nil) {
        self.serviceUUIDs = serviceUUIDs
        self.appearance = appearance
        self.localName = Self.fittingName(localName, serviceUUIDs: serviceUUIDs, appearance: appearance)
    }

    /// `name` cut (at a character's boundary) so that the packet holds it beside the flags (3
    /// bytes), the 16-bit service UUIDs (2 + 2 each) and the appearance (4): what bluetoothd
    /// would otherwise cut or refuse.
    public static func fittingName(_ name: String, serviceUUIDs: [BluetoothUUID], appearance: UInt16?)
        -> String
    {
        let uuids = serviceUUIDs.isEmpty ? 0 : 2 + serviceUUIDs.count * 2
        let room = packetBytes - 3 - uuids - (appearance == nil ? 0 : 4) - 2
        var kept = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            guard bytes + size <= room else { break }
            kept.append(character)
            bytes += size
        }
        return kept
    }
}

/// A characteristic of a registered peripheral: a typed handle the peripheral hands out, never
/// made from text.
public struct ServedCharacteristicHandle: Hashable, Sendable {
    /// The characteristic's UUID.
    public let uuid: BluetoothUUID
    let index: Int
}

/// What bluetoothd asks of a registered peripheral, on behalf of the centrals connected to it.
public enum PeripheralEvent: Sendable, Equatable {
    /// StartNotify (a first central subscribed) or StopNotify (the last one left): BlueZ 5.66
    /// says when notifications are wanted, not by whom.
    case notifying(BluetoothUUID, Bool)
    /// A central read the characteristic (`device` from ReadValue's options, when given).
    case read(BluetoothUUID, device: BluetoothAddress?)
    /// bluetoothd removed the advertisement itself (Release): the adapter went away or bluetoothd
    /// is stopping.
    case advertisementReleased
}
