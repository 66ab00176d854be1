import ArgumentParser
import HeartRate
import Monitor
import Outputs
import SessionLibrary

/// The characteristics `hrm decode` understands.
public enum DecodableCharacteristic: String, Sendable, ArgumentChoice {
    case measurement = "2a37"
    case bodySensorLocation = "2a38"
    case batteryLevel = "2a19"

    public init?(argument: String) {
        var text = argument.lowercased()
        if text.hasPrefix("0x") { text.removeFirst(2) }
        self.init(rawValue: text)
    }
}

/// A characteristic value decoded by `hrm decode`.
enum DecodedValue: Equatable {
    case measurement(HeartRateMeasurement)
    case bodySensorLocation(BodySensorLocation)
    case batteryLevel(UInt8)
}

/// Why a payload did not decode: a stable code, the byte offset where known, and a message.
struct DecodeFailure: Error, Equatable {
    let code: String
    let offset: Int?
    let message: String

    init(code: String, offset: Int?, message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    init(_ error: HeartRateDecodingError) {
        self.init(code: error.code.rawValue, offset: error.offset, message: error.description)
    }
}

enum PayloadDecoding {
    static func decode(_ bytes: [UInt8], as characteristic: DecodableCharacteristic) -> Result<
        DecodedValue, DecodeFailure
    > {
        do throws(HeartRateDecodingError) {
            switch characteristic {
            case .measurement:
                return .success(.measurement(try HeartRateMeasurement(decoding: bytes)))
            case .bodySensorLocation:
                return .success(.bodySensorLocation(try BodySensorLocation(decoding: bytes[...])))
            case .batteryLevel:
                let level = try BatteryLevel(decoding: bytes[...])
                guard let percent = level.percent else {
                    return .failure(
                        DecodeFailure(
                            code: "invalid_battery_level", offset: 0,
                            message: "battery level \(level.rawValue) is above 100 %"))
                }
                return .success(.batteryLevel(percent))
            }
        } catch {
            return .failure(DecodeFailure(error))
        }
    }
}
