import DBus
import PolarPMD

/// The GATT database hrm-sim exposes for one device, with handles laid out as BlueZ numbers them.
///
/// bluetoothd names objects by attribute handle: `serviceXXXX` is the service declaration,
/// `charXXXX` the characteristic declaration (its value follows at XXXX+1), `descXXXX` a
/// descriptor. With the layout below the Heart Rate service lands at 0x0015 with 0x2A37 at
/// char0016 and its CCC at desc0018, exactly as on the real lab peripheral. The GAP service
/// (0x1800) exists but, as in BlueZ, is not exported.
struct GATTLayout: Sendable {
    enum Role: Sendable, Equatable {
        case measurement, bodySensorLocation, controlPoint, batteryLevel
        case serviceChanged, clientFeatures, databaseHash, serverFeatures
        case deviceInformation(String)
        case pnpID
        /// Polar's PMD control point (read, write, indicate) and data characteristic (notify).
        case pmdControlPoint, pmdData
    }

    struct Descriptor: Sendable {
        let path: ObjectPath
        let uuid: SimulatedUUID
    }

    struct Characteristic: Sendable {
        let path: ObjectPath
        let servicePath: ObjectPath
        let uuid: SimulatedUUID
        let flags: [String]
        let role: Role
        let ccc: Descriptor?

        var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
    }

    struct Service: Sendable {
        let path: ObjectPath
        let uuid: SimulatedUUID
        let characteristics: [Characteristic]
    }

    let services: [Service]

    var characteristics: [Characteristic] { services.flatMap(\.characteristics) }

    /// Every UUID the device reports once its services are resolved, GAP included.
    var serviceUUIDs: [SimulatedUUID] { [SimulatedUUID(0x1800)] + services.map(\.uuid) }

    /// Throws only if an element made here were not a valid path element: the device's path is
    /// already a valid one.
    init(devicePath: ObjectPath, device: Scenario.Device) throws(DBusError) {
        var handle = 0x0008
        var services: [Service] = []

        func hex(_ value: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: max(4 - text.count, 0)) + text
        }

        func service(_ uuid: UInt16, _ chars: [(UInt16, [String], Role)]) throws(DBusError) {
            try service(SimulatedUUID(uuid), chars.map { (SimulatedUUID($0.0), $0.1, $0.2) })
        }

        func service(_ uuid: SimulatedUUID, _ chars: [(SimulatedUUID, [String], Role)]) throws(DBusError) {
            let servicePath = try devicePath.appending("service\(hex(handle))")
            var next = handle + 1
            var built: [Characteristic] = []
            for (charUUID, flags, role) in chars {
                let charPath = try servicePath.appending("char\(hex(next))")
                let notifies = flags.contains("notify") || flags.contains("indicate")
                let ccc =
                    notifies
                    ? Descriptor(
                        path: try charPath.appending("desc\(hex(next + 2))"), uuid: SimulatedUUID(0x2902))
                    : nil
                built.append(
                    Characteristic(
                        path: charPath, servicePath: servicePath, uuid: charUUID, flags: flags,
                        role: role, ccc: ccc))
                next += notifies ? 3 : 2
            }
            services.append(Service(path: servicePath, uuid: uuid, characteristics: built))
            handle = next
        }

        try service(
            0x1801,
            [
                (0x2A05, ["indicate"], .serviceChanged), (0x2B29, ["read", "write"], .clientFeatures),
                (0x2B2A, ["read"], .databaseHash), (0x2B3A, ["read"], .serverFeatures),
            ])
        var information: [(UInt16, [String], Role)] = []
        if let info = device.deviceInformation {
            if let value = info.manufacturer {
                information.append((0x2A29, ["read"], .deviceInformation(value)))
            }
            if let value = info.model { information.append((0x2A24, ["read"], .deviceInformation(value))) }
            if let value = info.serial { information.append((0x2A25, ["read"], .deviceInformation(value))) }
            if let value = info.firmware { information.append((0x2A26, ["read"], .deviceInformation(value))) }
        }
        information.append((0x2A50, ["read"], .pnpID))
        try service(0x180A, information)

        var heartRate: [(UInt16, [String], Role)] = [(0x2A37, ["notify"], .measurement)]
        if device.location != nil { heartRate.append((0x2A38, ["read"], .bodySensorLocation)) }
        heartRate.append((0x2A39, ["write"], .controlPoint))
        try service(0x180D, heartRate)

        if device.battery != nil {
            try service(0x180F, [(0x2A19, ["read", "notify"], .batteryLevel)])
        }
        // Polar's PMD service, after the standard ones as on an H10. The UUIDs are constants.
        if device.pmd != nil, let pmd = SimulatedUUID(PMDService.serviceUUID),
            let controlPoint = SimulatedUUID(PMDService.controlPointUUID),
            let data = SimulatedUUID(PMDService.dataUUID)
        {
            try service(
                pmd,
                [
                    (controlPoint, ["read", "write", "indicate"], .pmdControlPoint),
                    (data, ["notify"], .pmdData),
                ])
        }
        self.services = services
    }
}
