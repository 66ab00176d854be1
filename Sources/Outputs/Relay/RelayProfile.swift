package import BlueZ

/// What the relay serves: Heart Rate (0x180D: 0x2A37 notify, 0x2A38 read), Battery (0x180F:
/// 0x2A19 read and notify) and Device Information (0x180A: manufacturer, model, serial), and
/// how it advertises (a heart-rate belt, 0x0341, named to fit 31 bytes).
package enum RelayProfile {
    package static let heartRate = BluetoothUUID(0x180D)
    package static let measurement = BluetoothUUID(0x2A37)
    package static let location = BluetoothUUID(0x2A38)
    package static let battery = BluetoothUUID(0x180F)
    package static let batteryLevel = BluetoothUUID(0x2A19)
    package static let deviceInformation = BluetoothUUID(0x180A)
    package static let manufacturer = BluetoothUUID(0x2A29)
    package static let model = BluetoothUUID(0x2A24)
    package static let serial = BluetoothUUID(0x2A25)
    /// A heart-rate belt (Bluetooth Assigned Numbers, appearance 0x0341).
    package static let appearance: UInt16 = 0x0341

    /// The services, with what is known before the strap is: a chest strap, no battery yet
    /// (100 % until the strap says), "hrm" as the maker.
    package static var services: [ServedService] {
        [
            ServedService(
                heartRate,
                characteristics: [
                    ServedCharacteristic(measurement, flags: [.notify]),
                    ServedCharacteristic(location, flags: [.read], value: [1]),
                ]),
            ServedService(
                battery,
                characteristics: [ServedCharacteristic(batteryLevel, flags: [.read, .notify], value: [100])]),
            ServedService(
                deviceInformation,
                characteristics: [
                    ServedCharacteristic(manufacturer, flags: [.read], value: Array("hrm".utf8)),
                    ServedCharacteristic(model, flags: [.read], value: Array("relay".utf8)),
                    ServedCharacteristic(serial, flags: [.read], value: []),
                ]),
        ]
    }

    /// The advertisement for `name`: Heart Rate and Battery, a heart-rate belt.
    package static func advertisement(named name: String) -> AdvertisementSettings {
        AdvertisementSettings(localName: name, serviceUUIDs: [heartRate, battery], appearance: appearance)
    }
}
