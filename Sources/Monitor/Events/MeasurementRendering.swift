package import HeartRate

/// How decoded values read as JSON lines and as text. Shared by `decode` and `watch`.
package enum MeasurementRendering {
    /// Adds the measurement fields of the JSON contract (`bpm` ... `format`) to `json`.
    package static func addFields(of m: HeartRateMeasurement, to json: inout JSONLine) {
        json.add(.bpm, Int(m.heartRate))
        json.add(.contact, literal: m.sensorContact.literal)
        json.add(.energyKJ, m.energyExpended.map(Int.init))
        json.add(.rr1024, integersOf: m.rrIntervals) { Int($0.ticks) }
        json.add(.rrMs, numbersOf: m.rrIntervals) { $0.milliseconds }
        json.add(.format, literal: m.valueFormat.literal)
    }

    /// `72 bpm  contact detected  energy 258 kJ  RR 1000 825 ms`: RR in whole milliseconds,
    /// as the live line shows them; `exact` (decode, which is about the bytes) gives them to the
    /// last digit: `RR 1000 ms, 825.1953125 ms`.
    package static func text(_ m: HeartRateMeasurement, exact: Bool = false) -> String {
        var parts = ["\(m.heartRate) bpm", "contact \(m.sensorContact.text)"]
        if let energy = m.energyExpended {
            parts.append(
                m.isEnergySaturated ? "energy \(energy) kJ (saturated: reset needed)" : "energy \(energy) kJ")
        }
        if !m.rrIntervals.isEmpty, exact {
            parts.append(
                "RR " + m.rrIntervals.map { milliseconds($0.milliseconds) + " ms" }.joined(separator: ", "))
        } else if !m.rrIntervals.isEmpty {
            parts.append(
                "RR " + m.rrIntervals.map { String(Int($0.milliseconds.rounded())) }.joined(separator: " ")
                    + " ms")
        }
        return parts.joined(separator: "  ")
    }

    /// Exact milliseconds without a needless `.0`: 1000, 825.1953125.
    package static func milliseconds(_ value: Double) -> String {
        let text = String(value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

extension HeartRateMeasurement.SensorContact {
    /// `identifier` as a literal, for a JSON line (no check for what to escape).
    package var literal: JSONLiteral {
        switch self {
        case .unsupported: .unsupported
        case .notDetected: .notDetected
        case .detected: .detected
        }
    }

    /// Words for people: "detected", "not detected", "unsupported".
    package var text: String {
        switch self {
        case .unsupported: "unsupported"
        case .notDetected: "not detected"
        case .detected: "detected"
        }
    }
}

extension HeartRateMeasurement.ValueFormat {
    /// `rawValue` as a literal, for a JSON line (no check for what to escape).
    package var literal: JSONLiteral {
        switch self {
        case .uint8: .uint8
        case .uint16: .uint16
        }
    }
}
