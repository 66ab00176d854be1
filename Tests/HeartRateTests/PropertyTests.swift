import HeartRate
import Testing

/// SplitMix64: a small, seeded generator so that a failure can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct PropertyTests {
    /// A million random frames of 0-24 bytes: each decodes or throws, and what decodes encodes back
    /// to the frame, less the bytes a decoder ignores.
    @Test func randomBytesNeverCrash() async {
        // On a thread of its own: seconds of work that would otherwise hold a cooperative thread.
        let (decoded, failed, problem) = await offThePool { () -> (Int, Int, String?) in
            var rng = SplitMix64(state: 0x5EED_2A37)
            var decoded = 0
            var failed = 0
            for _ in 0..<1_000_000 {
                let length = Int.random(in: 0...24, using: &rng)
                let frame = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                do throws(HeartRateDecodingError) {
                    let m = try HeartRateMeasurement(decoding: frame)
                    decoded += 1
                    let again = m.encoded()
                    if again != Array(frame.prefix(again.count))
                        || (try? HeartRateMeasurement(decoding: again)) != m
                    {
                        return (decoded, failed, "re-encoding \(frame) gave \(again)")
                    }
                } catch {
                    failed += 1
                    if error.offset < 0 || error.offset > frame.count {
                        return (decoded, failed, "offset \(error.offset) outside \(frame)")
                    }
                }
            }
            return (decoded, failed, nil)
        }
        #expect(problem == nil)
        #expect(decoded + failed == 1_000_000)
        #expect(decoded > 100_000 && failed > 100_000)
    }

    /// decode(encode(m)) == m for random valid measurements.
    @Test func decodeInvertsEncode() async {
        let problem = await offThePool { () -> String? in
            var rng = SplitMix64(state: 42)
            let contacts: [HeartRateMeasurement.SensorContact] = [.unsupported, .notDetected, .detected]
            for _ in 0..<100_000 {
                let uint16 = Bool.random(using: &rng)
                let value =
                    uint16
                    ? UInt16.random(in: 0...UInt16.max, using: &rng) : UInt16.random(in: 0...255, using: &rng)
                let energy: UInt16? =
                    Bool.random(using: &rng) ? UInt16.random(in: 0...UInt16.max, using: &rng) : nil
                let rr = (0..<Int.random(in: 0...12, using: &rng)).map { _ in
                    UInt16.random(in: 0...UInt16.max, using: &rng)
                }
                do {
                    let m = try HeartRateMeasurement(
                        heartRate: value,
                        format: uint16 ? .uint16 : .uint8,
                        sensorContact: contacts.randomElement(using: &rng) ?? .unsupported,
                        energyExpended: energy,
                        rrIntervals: RRIntervals(ticks: rr),
                        reservedFlags: UInt8.random(in: 0...255, using: &rng)
                    )
                    let back = try HeartRateMeasurement(decoding: m.encoded())
                    if back != m || back.rrIntervals.ticks != rr { return "\(m) came back as \(back)" }
                } catch {
                    return "\(error)"
                }
            }
            return nil
        }
        #expect(problem == nil)
    }

    @Test func uint8FormatRejectsLargeValues() {
        #expect(throws: HeartRateEncodingError.valueTooLarge(300)) {
            try HeartRateMeasurement(heartRate: 300, format: .uint8)
        }
        #expect((try? HeartRateMeasurement(heartRate: 300))?.valueFormat == .uint16)
        #expect((try? HeartRateMeasurement(heartRate: 255))?.valueFormat == .uint8)
    }
}
