/// A PMD measurement type, as polar-ble-sdk's `PmdMeasurementType` numbers them: the low six bits
/// of a command's or a frame's type byte, and bit `rawValue` of the feature bitmask.
///
/// A struct rather than an enum: a sensor may name a type the SDK does not know, and that value
/// must survive (in an error, a recording) instead of trapping or being lost.
public struct PMDMeasurementType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The type's number (0 to 63).
    public let rawValue: UInt8

    /// The type numbered `rawValue` (only its low six bits count, as in the SDK's `fromId`).
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x3F }

    /// Electrocardiogram, in microvolts (the H10's single lead at 130 Hz).
    public static let ecg = PMDMeasurementType(rawValue: 0)
    /// Photoplethysmography (optical sensors: OH1, Verity Sense).
    public static let ppg = PMDMeasurementType(rawValue: 1)
    /// Acceleration on three axes, in milli-g.
    public static let acc = PMDMeasurementType(rawValue: 2)
    /// Peak-to-peak intervals from the optical sensor.
    public static let ppi = PMDMeasurementType(rawValue: 3)
    /// Gyroscope.
    public static let gyro = PMDMeasurementType(rawValue: 5)
    /// Magnetometer.
    public static let magnetometer = PMDMeasurementType(rawValue: 6)
    /// Skin temperature.
    public static let skinTemperature = PMDMeasurementType(rawValue: 7)
    /// The SDK mode (not a data stream: it unlocks other settings).
    public static let sdkMode = PMDMeasurementType(rawValue: 9)
    /// Location (GNSS).
    public static let location = PMDMeasurementType(rawValue: 10)
    /// Barometric pressure.
    public static let pressure = PMDMeasurementType(rawValue: 11)
    /// Temperature.
    public static let temperature = PMDMeasurementType(rawValue: 12)
    /// Offline recording (not a data stream).
    public static let offlineRecording = PMDMeasurementType(rawValue: 13)
    /// Offline heart rate.
    public static let offlineHR = PMDMeasurementType(rawValue: 14)

    /// Every type the SDK defines, in order of number.
    public static let known: [PMDMeasurementType] = [
        .ecg, .ppg, .acc, .ppi, .gyro, .magnetometer, .skinTemperature, .sdkMode, .location, .pressure,
        .temperature, .offlineRecording, .offlineHR,
    ]

    /// The SDK's name for the type in lower case (`ecg`, `acc`), nil for a type it does not define.
    public var name: String? {
        switch rawValue {
        case 0: "ecg"
        case 1: "ppg"
        case 2: "acc"
        case 3: "ppi"
        case 5: "gyro"
        case 6: "magnetometer"
        case 7: "skin_temperature"
        case 9: "sdk_mode"
        case 10: "location"
        case 11: "pressure"
        case 12: "temperature"
        case 13: "offline_recording"
        case 14: "offline_hr"
        default: nil
        }
    }

    /// The name, or `type N` for a type the SDK does not define.
    public var description: String { name ?? "type \(rawValue)" }

    /// Ordered by number.
    public static func < (lhs: PMDMeasurementType, rhs: PMDMeasurementType) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

/// Where a measurement goes: streamed now (online) or recorded on the sensor (offline). Bit 7 of a
/// command's type byte, as the SDK's `PmdRecordingType.asBitField` sets it.
public enum PMDRecordingType: UInt8, Hashable, Sendable {
    /// Streamed over the data characteristic.
    case online = 0
    /// Recorded in the sensor's memory.
    case offline = 1

    /// The bit this recording type sets in a command's type byte.
    var bitField: UInt8 { rawValue << 7 }
}

/// What a sensor offers: the value read from the PMD control point, `[0x0F, bitmask...]`.
///
/// Bit *i* of the bitmask (its bytes little-endian) stands for measurement type *i*; the H10
/// offers ECG (bit 0) and ACC (bit 2). Like the SDK's `fromByteArray`, only the types it defines
/// count; bits for others are kept in `bitmask`.
public struct PMDFeatures: Hashable, Sendable {
    /// The measurement types offered, in order of number.
    public let types: [PMDMeasurementType]
    /// The bitmask as read (the bytes after 0x0F).
    public let bitmask: [UInt8]

    /// The marker that starts a feature read.
    public static let marker: UInt8 = 0x0F

    /// The features of a control-point read. Throws `empty`, `notFeatures` or
    /// `truncatedFeatures`.
    public init(decoding value: ArraySlice<UInt8>) throws(PMDError) {
        guard let first = value.first else {
            throw PMDError(.empty, "the control point's value has no bytes")
        }
        guard first == Self.marker else {
            throw PMDError(
                .notFeatures, "a feature read starts with 0x0F; this one starts with \(hex(first))")
        }
        let mask = Array(value.dropFirst())
        guard !mask.isEmpty else {
            throw PMDError(.truncatedFeatures, offset: 1, "the feature read has no bitmask after 0x0F")
        }
        bitmask = mask
        types = PMDMeasurementType.known.filter { type in
            let byte = Int(type.rawValue) / 8
            return byte < mask.count && mask[byte] & (1 << (type.rawValue % 8)) != 0
        }
    }

    /// Whether the sensor offers `type`.
    public func offers(_ type: PMDMeasurementType) -> Bool { types.contains(type) }
}

/// `0xAB`.
func hex(_ byte: UInt8) -> String {
    let digits: [Character] = [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F",
    ]
    return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
}
