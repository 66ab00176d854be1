import HeartRate
import Testing

@Suite struct MalformedFrameTests {
    private func error(_ frame: [UInt8]) -> HeartRateDecodingError? {
        do {
            _ = try HeartRateMeasurement(decoding: frame)
            return nil
        } catch {
            return error
        }
    }

    @Test func emptyFrame() {
        #expect(
            error([]) == HeartRateDecodingError(code: .emptyFrame, offset: 0, fieldLength: 1, frameLength: 0))
    }

    @Test func truncatedHeartRate() {
        #expect(error([0x00])?.code == .truncatedHeartRate)
        #expect(error([0x00])?.offset == 1)
        #expect(error([0x01])?.code == .truncatedHeartRate)
        #expect(error([0x01, 0x48])?.code == .truncatedHeartRate)
        #expect(error([0x01, 0x48])?.offset == 1)
        #expect(error([0x01, 0x48])?.fieldLength == 2)
    }

    @Test func truncatedEnergy() {
        let e = error([0x0E, 0x48, 0x01])
        #expect(e?.code == .truncatedEnergy)
        #expect(e?.offset == 2)
        #expect(error([0x09, 0x48, 0x00])?.offset == 3)
        #expect(error([0x09, 0x48, 0x00, 0x01])?.code == .truncatedEnergy)
    }

    @Test func oddRRLength() {
        let e = error([0x10, 0x48, 0x4D, 0x03, 0x01])
        #expect(e?.code == .oddRRLength)
        #expect(e?.offset == 4)
        #expect(error([0x18, 0x48, 0x00, 0x00, 0x4D])?.code == .oddRRLength)
    }

    @Test func codesAreStable() {
        #expect(
            HeartRateDecodingError.Code.allCases.map(\.rawValue) == [
                "empty_frame", "truncated_heart_rate", "truncated_energy", "odd_rr_length",
            ])
    }

    @Test func messagesSayWhere() {
        let e = error([0x0E, 0x48, 0x01])
        #expect(
            e?.description
                == "truncated energy expended: the flags announce a UINT16 at byte 2, but only 1 of its 2 bytes are present"
        )
    }

    /// Drip-fed: every proper prefix of every valid vector either throws the code for the field it
    /// cuts, or (cut at an RR boundary) decodes to the same measurement with fewer intervals.
    @Test func everyPrefixOfEveryVector() throws {
        let vectors: [[UInt8]] = [
            [0x00, 0x48],
            [0x01, 0x2C, 0x01],
            [0x16, 0x48, 0x4D, 0x03],
            [0x0E, 0x48, 0x01, 0x00],
            [0x19, 0x2C, 0x01, 0xFF, 0xFF, 0x00, 0x04, 0x4D, 0x03],
            [0x1F, 0x48, 0x00, 0x10, 0x00, 0x00, 0x04, 0x01, 0x02, 0x03, 0x04],
            [0x10, 0x48] + Array(repeating: 0x33, count: 18),
        ]
        for vector in vectors {
            let full = try HeartRateMeasurement(decoding: vector)
            let valueEnd = full.valueFormat == .uint16 ? 3 : 2
            let energyEnd = valueEnd + (full.energyExpended == nil ? 0 : 2)
            for length in 0..<vector.count {
                let prefix = Array(vector[..<length])
                let expected: HeartRateDecodingError.Code? =
                    if length == 0 { .emptyFrame } else if length < valueEnd {
                        .truncatedHeartRate
                    } else if length < energyEnd { .truncatedEnergy } else if (length - energyEnd) % 2 == 1 {
                        .oddRRLength
                    } else { nil }
                if let expected {
                    #expect(error(prefix)?.code == expected, "prefix \(prefix) of \(vector)")
                } else {
                    let m = try HeartRateMeasurement(decoding: prefix)
                    #expect(m.heartRate == full.heartRate)
                    #expect(m.energyExpended == full.energyExpended)
                    #expect(Array(m.rrIntervals) == Array(full.rrIntervals.prefix((length - energyEnd) / 2)))
                }
            }
        }
    }
}
