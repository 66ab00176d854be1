/// Assigned numbers of the Heart Rate Service and of the characteristics hrm reads beside it.
public enum HeartRateService {
    /// Heart Rate service.
    public static let serviceUUID: UInt16 = 0x180D
    /// Heart Rate Measurement: notify.
    public static let measurementUUID: UInt16 = 0x2A37
    /// Body Sensor Location: read.
    public static let bodySensorLocationUUID: UInt16 = 0x2A38
    /// Heart Rate Control Point: write.
    public static let controlPointUUID: UInt16 = 0x2A39
    /// Battery service and its Battery Level characteristic.
    public static let batteryServiceUUID: UInt16 = 0x180F
    /// Battery Level: read (and notify, on some sensors).
    public static let batteryLevelUUID: UInt16 = 0x2A19
}

/// Commands for the Heart Rate Control Point (0x2A39).
public enum HeartRateControlPoint: UInt8, Hashable, Sendable {
    /// Sets Energy Expended back to zero. The only command the specification defines; a sensor
    /// answers any other value with ATT error 0x80 (Control Point value not supported).
    case resetEnergyExpended = 0x01

    /// The value to write.
    public var encoded: [UInt8] { [rawValue] }
}
