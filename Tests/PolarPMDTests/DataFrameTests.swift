import Testing

@testable import PolarPMD

/// Data frames against polar-ble-sdk's own tests (`EcgDataTest`, `AccDataTest`,
/// `BlePmdClientParsersTest`, `PmdTimeStampUtilsTest`, `BlePmdClientTest`): the same bytes, the
/// values they expect.
@Suite struct DataFrameTests {
    /// The header the SDK's ECG and ACC tests share: timestamp 2,000,000,000 ns.
    static func header(type: UInt8, frameType: UInt8) -> [UInt8] {
        [type, 0x00, 0x94, 0x35, 0x77, 0x00, 0x00, 0x00, 0x00, frameType]
    }

    /// A decoder whose previous timestamp for the frames of `bytes` is `previous` (the SDK's tests
    /// inject it): a first frame of the same key ending then is decoded first.
    static func decoder(previous: UInt64, for bytes: [UInt8], sampleRate: Int = 0, factor: Float = 1)
        -> PMDDecoder
    {
        var decoder = PMDDecoder()
        let type = PMDMeasurementType(rawValue: bytes[0])
        decoder.set(type, .init(sampleRate: sampleRate, factor: factor))
        var first = bytes
        for shift in 0..<8 { first[1 + shift] = UInt8(truncatingIfNeeded: previous >> (8 * UInt64(shift))) }
        _ = try? decoder.decode(first[...])
        return decoder
    }

    @Test func headerOfTheSDKsECGFrame() throws {
        // BlePmdClientTest `process ecg data`: 00 38 6C 31 72 A4 D3 23 0D 03 ...
        let bytes: [UInt8] = [
            0x00, 0x38, 0x6C, 0x31, 0x72, 0xA4, 0xD3, 0x23, 0x0D, 0x03, 0x00, 0x12, 0x03, 0x11, 0x10, 0x04,
            0x00,
        ]
        let frame = try PMDDataFrame(decoding: bytes[...])
        #expect(frame.type == .ecg)
        #expect(frame.timestamp == 946_833_049_921_875_000)
        #expect(frame.frameType == 3 && !frame.isCompressed)
        #expect(Array(frame.content) == [0x00, 0x12, 0x03, 0x11, 0x10, 0x04, 0x00])
        // Type 3 is not read (two values and a status: no single lead's microvolts).
        do {
            _ = try PMDECGValues.decode(frame)
            Issue.record("type 3 read")
        } catch {
            #expect(error.code == .unsupportedFrameType)
        }
    }

    /// `EcgDataTest.process raw ecg data type 0`: 3-byte signed microvolts.
    @Test func ecgType0() throws {
        let bytes = Self.header(type: 0, frameType: 0) + [0x02, 0x80, 0xFF, 0x02, 0x80, 0x00]
        var decoder = Self.decoder(previous: 100, for: bytes)
        guard case .ecg(let samples) = try decoder.decode(bytes[...]).data else {
            Issue.record("not ECG")
            return
        }
        #expect(samples.map(\.microvolts) == [-32766, 32770])
        #expect(samples.last?.timestamp == 2_000_000_000)
        // (2e9 - 100) / 2 after 100: 1,000,000,050.
        #expect(samples.first?.timestamp == 1_000_000_050)
    }

    /// `EcgDataTest.process raw ecg data type 1`: 14 bits and status bits.
    @Test func ecgType1() throws {
        let frame = try PMDDataFrame(
            decoding: (Self.header(type: 0, frameType: 1) + [0x02, 0x80, 0xFF, 0x80, 0x02, 0x00])[...])
        let values = try PMDECGValues.decode(frame)
        #expect(values.map(\.microvolts) == [2, 640])
        #expect(values[0].status & 0x01 != 0)  // oversampling
        #expect((values[0].status & 0x06) >> 1 == 3)  // skin contact
        #expect((values[0].status & 0x18) >> 3 == 3)  // contact impedance
        #expect(values[1].status == 0)
    }

    /// `EcgDataTest.process raw ecg data type 2`: 22 bits and tags.
    @Test func ecgType2() throws {
        let frame = try PMDDataFrame(
            decoding: (Self.header(type: 0, frameType: 2) + [0x80, 0x80, 0xFC, 0xFF, 0xFF, 0x03])[...])
        let values = try PMDECGValues.decode(frame)
        #expect(values.map(\.microvolts) == [32896, 262143])
        #expect((values[0].status & 0x1C) >> 2 == 7 && (values[0].status & 0xE0) >> 5 == 7)
        #expect((values[1].status & 0x1C) >> 2 == 0 && (values[1].status & 0xE0) >> 5 == 0)
    }

    /// An H10 ECG frame: 73 samples, the first frame of a stream, timed from the rate.
    @Test func h10ECGFrameTimedFromTheRate() throws {
        let microvolts: [Int32] = (0..<73).map { Int32($0 * 97 % 4001) - 2000 }
        var content: [UInt8] = []
        for value in microvolts {
            let raw = UInt32(bitPattern: value)
            content += [UInt8(raw & 0xFF), UInt8(raw >> 8 & 0xFF), UInt8(raw >> 16 & 0xFF)]
        }
        let timestamp: UInt64 = 599_616_023_171_427_290
        let bytes = PMDDataFrame.encode(type: .ecg, timestamp: timestamp, frameType: 0, content: content)
        var decoder = PMDDecoder()
        decoder.started(.ecg, selected: .h10ECG)
        guard case .ecg(let samples) = try decoder.decode(bytes[...]).data else {
            Issue.record("not ECG")
            return
        }
        #expect(samples.map(\.microvolts) == microvolts)
        #expect(samples.last?.timestamp == timestamp)
        let first = Double(timestamp) - 72 * 1e9 / 130
        #expect(samples.first.map { abs(Double($0.timestamp) - first) <= 1 } == true)
        // The next frame counts from this one's timestamp: 73 samples over 73/130 s.
        let next = PMDDataFrame.encode(
            type: .ecg, timestamp: timestamp + 561_538_462, frameType: 0, content: content)
        guard case .ecg(let later) = try decoder.decode(next[...]).data else {
            Issue.record("the next frame is not ECG")
            return
        }
        #expect(later.first?.timestamp == timestamp + 7_692_308)
        #expect(decoder.previousTimestamp(.ecg, frameType: 0, compressed: false) == timestamp + 561_538_462)
    }

    /// `AccDataTest.process acc raw data frame type 1`: 16-bit axes, the first frame at 52 Hz.
    @Test func accRawType1() throws {
        let bytes = Self.header(type: 2, frameType: 1) + SDKVectors.accRawType1Content
        var decoder = PMDDecoder()
        decoder.set(.acc, .init(sampleRate: 52))
        guard case .acc(let samples) = try decoder.decode(bytes[...]).data else {
            Issue.record("not ACC")
            return
        }
        #expect(samples.count == 216 / 2 / 3)
        #expect([samples[0].x, samples[0].y, samples[0].z] == [-9, -1, 999])
        #expect([samples[1].x, samples[1].y, samples[1].z] == [-8, -2, 997])
        #expect(samples.last?.timestamp == 2_000_000_000)
    }

    @Test func accRawTypes0And2() throws {
        let type0 = try PMDDataFrame(
            decoding: (Self.header(type: 2, frameType: 0) + [0xFF, 0x01, 0x80])[...])
        #expect(try PMDACCValues.decode(type0) == [-1, 1, -128])
        let type2 = try PMDDataFrame(
            decoding: (Self.header(type: 2, frameType: 2) + [
                0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x80,
            ])[...])
        #expect(try PMDACCValues.decode(type2) == [-1, 1, -8_388_608])
    }

    /// `AccDataTest.process acc compressed data type 0`: 16-bit deltas in g, factor 2.44e-4, 56
    /// deltas after the reference, times from the previous frame at 100 ns.
    @Test func accCompressedType0() throws {
        let bytes = Self.header(type: 2, frameType: 0x80) + SDKVectors.accCompressedType0Content
        let factor: Float = 2.44E-4
        var decoder = Self.decoder(previous: 100, for: bytes, factor: factor)
        guard case .acc(let samples) = try decoder.decode(bytes[...]).data else {
            Issue.record("not ACC")
            return
        }
        #expect(samples.count == 57)
        // The SDK's test computes (factor * sample * 1000f).toInt().
        func expected(_ raw: Int32) -> Int32 { Int32((factor * Float(raw) * 1000).rounded(.towardZero)) }
        #expect(
            [samples[0].x, samples[0].y, samples[0].z] == [expected(1905), expected(27376), expected(-29282)])
        #expect(
            [samples[1].x, samples[1].y, samples[1].z] == [
                expected(1905 + 190), expected(27376 - 105), expected(-29282 - 85),
            ])
        for sample in samples {
            #expect(abs(sample.x) <= 8000 && abs(sample.y) <= 8000 && abs(sample.z) <= 8000)
        }
        let delta = Double(2_000_000_000 - 100) / 57
        #expect(samples.first?.timestamp == UInt64((100 + delta).rounded(.toNearestOrEven)))
        #expect(samples.last?.timestamp == 2_000_000_000)
    }

    /// `AccDataTest.process acc compressed data type 1`: 6-bit deltas; previous timestamp 100,
    /// this one 101, so the first sample's 100.5 ns rounds to 100 (half to even, as Kotlin).
    @Test func accCompressedType1() throws {
        let bytes: [UInt8] = [0x02, 0x65, 0, 0, 0, 0, 0, 0, 0, 0x81] + SDKVectors.accCompressedType1Content
        var decoder = Self.decoder(previous: 100, for: bytes)
        guard case .acc(let samples) = try decoder.decode(bytes[...]).data else {
            Issue.record("not ACC")
            return
        }
        #expect(samples.count == 2)
        #expect([samples[0].x, samples[0].y, samples[0].z] == [-15, 20, 1008])
        #expect([samples[1].x, samples[1].y, samples[1].z] == [-20, 17, 1008])
        #expect(samples.map(\.timestamp) == [100, 101])
    }

    /// `BlePmdClientParsersTest`: reference samples of 16 bits, sign-extended.
    @Test func referenceSamples() throws {
        let samples = try PMDDeltaCoding.decode(
            [0xFF, 0xFF, 0x00, 0x00, 0xFF, 0x7F, 0x00, 0x80][...], channels: 4, resolution: 16)
        #expect(samples == [-1, 0, 32767, -32768])
        let wide = try PMDDeltaCoding.decode(
            [0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x80][...], channels: 3,
            resolution: 32)
        #expect(wide.map { UInt32(bitPattern: $0) } == [0, 0xFFFF_FFFF, 0x8000_0000])
    }

    /// `test_parseDeltaFrameAllSamples_withResolution32_realVector1`: 28- and 32-bit deltas over
    /// float bits, wrapping.
    @Test func delta32RealVector() throws {
        let samples = try PMDDeltaCoding.decode(
            SDKVectors.delta32RealVector[...], channels: 3, resolution: 32)
        #expect(samples.count == 3 * (1 + 6 + 3 + 6 + 3))
        #expect(samples[0..<3].map { UInt32(bitPattern: $0) } == [0x3F80_0000, 0x4120_0000, 0x41A0_0000])
        let second: [UInt32] = [
            0x3F80_0000 + 0x1A0_0000, 0x4120_0000 + 0x080_0000, 0x41A0_0000 &+ 0xFDEC_CCCD,
        ]
        #expect(samples[3..<6].map { UInt32(bitPattern: $0) } == second)
    }

    /// `test_parseDeltaFrameAllSamples_withResolution32`: one block of 17 samples of 32 bits.
    @Test func delta32() throws {
        let samples = try PMDDeltaCoding.decode(SDKVectors.delta32[...], channels: 3, resolution: 32)
        #expect(samples.count == 3 * 18)
        #expect(samples[0..<3].map { UInt32(bitPattern: $0) } == [0x0000_0002, 0xE999_3219, 0xFFFE_DA00])
        let second: [UInt32] = [
            0x0000_0002 &+ 0xE999_3217, 0xE999_3219 &+ 0x1665_A7E7, 0xFFFE_DA00 &+ 0x4606_DB38,
        ]
        #expect(samples[3..<6].map { UInt32(bitPattern: $0) } == second)
    }

    /// `test_parseDeltaFrameAllSamples_multipleDeltas`: nine blocks of 3- and 4-bit deltas.
    @Test func deltaMultipleBlocks() throws {
        let samples = try PMDDeltaCoding.decode(
            SDKVectors.deltaMultipleBlocks[...], channels: 3, resolution: 16)
        #expect(samples.count == 3 * (1 + 9 + 30 + 10 + 20 + 10 + 30 + 10 + 10 + 10))
        #expect(Array(samples[0..<6]) == [-55, 18, 17, -54, 18, 18])
    }

    /// `PmdTimeStampUtilsTest`, every case.
    @Test func sampleTimesAsTheSDKDerivesThem() throws {
        #expect(throws: PMDError.self) {
            try PMDTimestamps.times(count: 100, timestamp: 100_000, previous: 0, sampleRate: 0)
        }
        do {
            _ = try PMDTimestamps.times(count: 100, timestamp: 100_000, previous: 0, sampleRate: 52)
            Issue.record("negative times accepted")
        } catch {
            #expect(error.code == .timestampBeforeEpoch)
        }
        #expect(
            try PMDTimestamps.times(count: 10, timestamp: 10_000_000_000, previous: 0, sampleRate: 1)
                == (1...10).map { UInt64($0) * 1_000_000_000 })
        #expect(
            try PMDTimestamps.times(count: 1, timestamp: 1_000_000_000, previous: 0, sampleRate: 1) == [
                1_000_000_000
            ])
        #expect(
            try PMDTimestamps.times(
                count: 10, timestamp: 11_000_000_000, previous: 1_000_000_000, sampleRate: 1)
                == (2...11).map { UInt64($0) * 1_000_000_000 })
        #expect(
            try PMDTimestamps.times(count: 3, timestamp: 2_000_000_000, previous: 100, sampleRate: 1)
                == [666_666_733, 1_333_333_367, 2_000_000_000])
        #expect(
            try PMDTimestamps.times(
                count: 1, timestamp: 2_000_000_000, previous: 1_000_000_000, sampleRate: 1)
                == [2_000_000_000])
        #expect(throws: PMDError.self) {
            try PMDTimestamps.times(count: 0, timestamp: 1, previous: nil, sampleRate: 1)
        }
        // Not in the SDK: a timestamp not after the previous one counts from the rate.
        #expect(
            try PMDTimestamps.times(
                count: 2, timestamp: 3_000_000_000, previous: 5_000_000_000, sampleRate: 1)
                == [2_000_000_000, 3_000_000_000])
    }

    /// `BlePmdClientTest.test previous timestamp` and `... reset`: kept per measurement and frame
    /// type, updated even when the frame's samples cannot be read, forgotten on reset.
    @Test func previousTimestampsPerTypeAndFrameType() {
        let first: [UInt8] = [0x02, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x83, 0x00]
        let second: [UInt8] = [0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x83, 0x00]
        let other: [UInt8] = [0x03, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x83, 0x00]
        let third: [UInt8] = [0x02, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x83, 0x00]
        var decoder = PMDDecoder()
        #expect(decoder.previousTimestamp(.acc, frameType: 3, compressed: true) == nil)
        _ = try? decoder.decode(first[...])
        #expect(decoder.previousTimestamp(.acc, frameType: 3, compressed: true) == 1)
        _ = try? decoder.decode(other[...])
        _ = try? decoder.decode(second[...])
        #expect(decoder.previousTimestamp(.acc, frameType: 3, compressed: true) == 0x0FFF_FFFF_FFFF_FFFF)
        _ = try? decoder.decode(other[...])
        _ = try? decoder.decode(third[...])
        #expect(decoder.previousTimestamp(.acc, frameType: 3, compressed: true) == 3)
        #expect(decoder.previousTimestamp(.acc, frameType: 3, compressed: false) == nil)
        decoder.reset()
        #expect(decoder.previousTimestamp(.acc, frameType: 3, compressed: true) == nil)
    }

    /// A lost notification: the next frame's samples keep their spacing and say how many were
    /// lost; with the SDK's timing they spread over the lost frame's time.
    @Test func aLostFrame() throws {
        let content = [UInt8](repeating: 0, count: 73 * 3)
        let start: UInt64 = 700_000_000_000_000_000
        let frameSpan: UInt64 = 561_538_462  // 73 samples at 130 Hz
        for timing in [PMDDecoder.GapTiming.sampleRate, .sdk] {
            var decoder = PMDDecoder(gapTiming: timing)
            decoder.started(.ecg, selected: .h10ECG)
            let first = try decoder.decode(
                PMDDataFrame.encode(type: .ecg, timestamp: start, frameType: 0, content: content)[...])
            #expect(first.missingSamples == 0)
            let next = try decoder.decode(
                PMDDataFrame.encode(type: .ecg, timestamp: start + frameSpan, frameType: 0, content: content)[
                    ...])
            #expect(next.missingSamples == 0)
            // The third frame's notification is lost; the fourth comes.
            let fourth = try decoder.decode(
                PMDDataFrame.encode(
                    type: .ecg, timestamp: start + 3 * frameSpan, frameType: 0, content: content)[...])
            #expect(fourth.missingSamples == 73)
            guard case .ecg(let samples) = fourth.data, let firstTime = samples.first?.timestamp else {
                Issue.record("not ECG")
                continue
            }
            let spacing = Double(samples[1].timestamp - firstTime)
            switch timing {
            case .sampleRate:
                #expect(abs(spacing - 1e9 / 130) <= 1)
                #expect(firstTime == start + 3 * frameSpan - 553_846_154)  // 72 intervals back
            case .sdk:
                #expect(abs(spacing - 2e9 / 130) <= 1)
            }
        }
    }

    /// A sensor's clock a little off its nominal rate is no loss.
    @Test func aSlightlyFastClockLosesNothing() throws {
        var decoder = PMDDecoder()
        decoder.started(.acc, selected: .h10ACC(rate: 200, rangeG: 2))
        let content = [UInt8](repeating: 1, count: 36 * 6)
        var timestamp: UInt64 = 700_000_000_000_000_000
        for _ in 0..<10 {
            let decoded = try decoder.decode(
                PMDDataFrame.encode(type: .acc, timestamp: timestamp, frameType: 1, content: content)[...])
            #expect(decoded.missingSamples == 0)
            timestamp += 36 * 5_000_000 * 1003 / 1000
        }
    }
}
