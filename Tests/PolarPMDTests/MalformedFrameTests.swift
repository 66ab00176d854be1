import Testing

@testable import PolarPMD

/// Bad bytes are typed errors, never a trap: every truncated prefix of valid frames, and random
/// bytes through every reader.
@Suite struct MalformedFrameTests {
    /// A small deterministic generator (SplitMix64), so that a failure can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func everyPrefixOfARawECGFrame() {
        let frame = PMDDataFrame.encode(
            type: .ecg, timestamp: 700_000_000_000_000_000, frameType: 0,
            content: (0..<219).map { UInt8($0 % 251) })
        for length in 0..<frame.count {
            var decoder = PMDDecoder()
            decoder.started(.ecg, selected: .h10ECG)
            do {
                let decoded = try decoder.decode(frame[..<length])
                guard case .ecg(let samples) = decoded.data else {
                    Issue.record("not ECG")
                    continue
                }
                // A prefix that happens to end between samples is a shorter frame.
                #expect((length - 10) % 3 == 0 && samples.count == (length - 10) / 3)
            } catch {
                let expected: PMDError.Code =
                    length == 0
                    ? .empty : length < 10 ? .truncatedHeader : length == 10 ? .noSamples : .truncatedSample
                #expect(error.code == expected, "length \(length)")
            }
        }
    }

    @Test func everyPrefixOfACompressedACCFrame() {
        let frame =
            [0x02, 0x00, 0x94, 0x35, 0x77, 0x00, 0x00, 0x00, 0x00, 0x80]
            + SDKVectors.accCompressedType0Content
        var full = PMDDecoder()
        full.set(.acc, .init(sampleRate: 200, factor: 2.44E-4))
        let all = (try? full.decode(frame[...])).map { decoded -> Int in
            if case .acc(let samples) = decoded.data { return samples.count }
            return 0
        }
        #expect(all == 57)
        var errors: Set<PMDError.Code> = []
        for length in 0..<frame.count {
            var decoder = PMDDecoder()
            decoder.set(.acc, .init(sampleRate: 200, factor: 2.44E-4))
            do {
                let decoded = try decoder.decode(frame[..<length])
                if case .acc(let samples) = decoded.data { #expect(samples.count < 57) }
            } catch {
                errors.insert(error.code)
                #expect(error.offset <= length)
            }
        }
        #expect(
            errors.isSuperset(of: [.truncatedHeader, .noSamples, .truncatedReference, .truncatedDeltaBlock]))
    }

    @Test func badDeltaWidths() {
        for width: UInt8 in [0, 33, 0xFF] {
            do {
                _ = try PMDDeltaCoding.decode(
                    [0x01, 0x00, 0x02, 0x00, 0x03, 0x00, width, 0x01, 0x00][...], channels: 3, resolution: 16)
                Issue.record("width \(width) accepted")
            } catch {
                #expect(error.code == .invalidDeltaWidth)
                #expect(error.offset == 6)
            }
        }
    }

    @Test func unsupportedFrameTypes() {
        for (type, frameType, compressed) in [
            (PMDMeasurementType.ecg, UInt8(0), true), (.ecg, 4, false), (.acc, 3, false), (.acc, 2, true),
        ] {
            let bytes = PMDDataFrame.encode(
                type: type, timestamp: 1_000_000_000, frameType: frameType, compressed: compressed,
                content: [0, 0, 0, 0, 0, 0])
            var decoder = PMDDecoder()
            decoder.set(type, .init(sampleRate: 100))
            do {
                _ = try decoder.decode(bytes[...])
                Issue.record("\(type) frame type \(frameType) read")
            } catch {
                #expect(error.code == .unsupportedFrameType)
            }
        }
    }

    @Test func factorsFromAnywhereNeverTrap() throws {
        let bytes = [0x02, 0x65, 0, 0, 0, 0, 0, 0, 0, 0x81] + SDKVectors.accCompressedType1Content
        for factor: Float in [.nan, .infinity, -.infinity, 1e30, -1e30, 0] {
            let frame = try PMDDataFrame(decoding: bytes[...])
            let values = try PMDACCValues.decode(frame, factor: factor)
            #expect(values.count == 6)
        }
        #expect(truncatedInt32(.nan) == 0 && truncatedInt32(1e30) == .max && truncatedInt32(-1e30) == .min)
        #expect(truncatedInt32(-2.9) == -2)
        #expect(roundedHalfEven(.max - 1, plus: 5) == .max && roundedHalfEven(3, plus: -10) == 0)
        #expect(roundedHalfEven(100, plus: 0.5) == 100 && roundedHalfEven(101, plus: 0.5) == 102)
        #expect(roundedHalfEven(100, plus: -0.5) == 100 && roundedHalfEven(100, plus: -1.5) == 98)
    }

    /// Random bytes through every reader: errors are fine, traps are not (the test process would
    /// die). Some of the values start with a valid header so that the sample readers are reached.
    @Test func randomBytes() {
        var random = SplitMix(state: 24)
        var decoded = 0
        var failed = 0
        for round in 0..<20_000 {
            let length = Int.random(in: 0..<80, using: &random)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if round % 2 == 0, bytes.count > 10 {
                bytes[0] = [0, 2][round / 2 % 2]
                bytes[9] = [0x00, 0x01, 0x02, 0x80, 0x81][round / 4 % 5]
                bytes[8] = [0x08, 0xFF][round / 20 % 2]  // late enough for any rate, or near 2^64
            }
            var decoder = PMDDecoder()
            decoder.set(.ecg, .init(sampleRate: 130))
            decoder.set(
                .acc, .init(sampleRate: [0, 25, 200][round % 3], factor: [1, 2.44E-4, .nan][round % 3]))
            if (try? decoder.decode(bytes[...])) != nil { decoded += 1 } else { failed += 1 }
            _ = try? decoder.decode(bytes[...])
            _ = try? PMDControlPointValue(decoding: bytes[...])
            _ = try? PMDAvailableSettings(decoding: bytes[...])
            _ = try? PMDResponse(decoding: ([0xF0] + bytes)[...]).settings()
            _ = try? PMDDeltaCoding.decode(bytes[...], channels: 3, resolution: 16)
            _ = try? PMDDeltaCoding.decode(bytes[...], channels: 1, resolution: 32)
        }
        #expect(decoded > 1000 && failed > 1000)
    }
}
