import HeartRate
import Monitor
import Outputs
import SessionLibrary

/// Renders `hrm decode` results: one line per payload.
protocol DecodeRenderer {
    /// The stdout line for a decoded payload.
    func value(_ value: DecodedValue, bytes: [UInt8]) -> String
    /// The stdout line for a payload that did not decode, if this format prints one there.
    func failure(_ failure: DecodeFailure, bytes: [UInt8]) -> String?
}

struct DecodeTextRenderer: DecodeRenderer {
    func value(_ value: DecodedValue, bytes: [UInt8]) -> String {
        switch value {
        case .measurement(let m):
            "\(MeasurementRendering.text(m, exact: true))  [\(m.valueFormat.rawValue), flags 0x\(HexPayload.format([m.flags]))]"
        case .bodySensorLocation(let location):
            "body sensor location: \(location.text)" + (location.isReserved ? "" : " (\(location.rawValue))")
        case .batteryLevel(let percent):
            "battery: \(percent) %"
        }
    }

    /// Text mode reports failures on stderr only.
    func failure(_ failure: DecodeFailure, bytes: [UInt8]) -> String? { nil }
}

struct DecodeJSONRenderer: DecodeRenderer {
    func value(_ value: DecodedValue, bytes: [UInt8]) -> String {
        switch value {
        case .measurement(let m):
            var json = JSONLine(type: "measurement")
            MeasurementRendering.addFields(of: m, to: &json)
            json.add("flags", Int(m.flags))
            return json.line
        case .bodySensorLocation(let location):
            var json = JSONLine(type: "location")
            json.add("location", location.identifier)
            json.add("value", Int(location.rawValue))
            return json.line
        case .batteryLevel(let percent):
            var json = JSONLine(type: "battery")
            json.add("percent", Int(percent))
            return json.line
        }
    }

    func failure(_ failure: DecodeFailure, bytes: [UInt8]) -> String? {
        var json = JSONLine(type: "error")
        json.add("code", failure.code)
        json.add("offset", failure.offset)
        json.add("message", failure.message)
        json.add("hex", HexPayload.format(bytes))
        return json.line
    }
}

extension BodySensorLocation {
    var isReserved: Bool {
        if case .reserved = self { true } else { false }
    }

    /// Words for people: "chest", "ear lobe", "reserved (9)".
    var text: String {
        switch self {
        case .earLobe: "ear lobe"
        case .reserved(let value): "reserved (\(value))"
        default: identifier
        }
    }
}
