import Testing

@testable import PolarPMD

/// The sensor's side (for hrm-sim): what it writes, the decoder reads back as it was.
@Suite struct EncodingTests {
    @Test func featuresRoundTrip() throws {
        let bytes = PMDFeatures.encode([.ecg, .acc])
        #expect(bytes == [0x0F, 0x05, 0x00])
        #expect(try PMDFeatures(decoding: bytes[...]).types == [.ecg, .acc])
        #expect(
            try PMDFeatures(decoding: PMDFeatures.encode(PMDMeasurementType.known)[...]).types
                == PMDMeasurementType.known)
    }

    @Test func availableSettingsRoundTrip() throws {
        let offered: [PMDSettingType: [Int]] = [
            .sampleRate: [25, 50, 100, 200], .resolution: [16], .range: [2, 4, 8],
            .rangeMilliunit: [-1, 2000],
            .factor: [Int(Float(2.44E-4).bitPattern)],
        ]
        let bytes = try PMDAvailableSettings.encode(offered)
        // As the H10 answers a get-settings for ACC, sample rates first.
        #expect(Array(bytes.prefix(10)) == [0x00, 0x04, 0x19, 0x00, 0x32, 0x00, 0x64, 0x00, 0xC8, 0x00])
        let settings = try PMDAvailableSettings(decoding: bytes[...])
        #expect(settings.values == offered)
        #expect(settings.factor == 2.44E-4)
        #expect(throws: PMDError.self) { try PMDAvailableSettings.encode([.channels: [300]]) }
    }

    @Test func ecgType0RoundTrip() throws {
        let microvolts: [Int32] = [0, -1, 1, 8_388_607, -8_388_608, 1234, -4321]
        let frame = try PMDDataFrame(
            decoding: PMDDataFrame.encode(
                type: .ecg, timestamp: 1, frameType: 0, content: PMDECGValues.encodeType0(microvolts))[...])
        #expect(try PMDECGValues.decode(frame).map(\.microvolts) == microvolts)
        #expect(PMDECGValues.encodeType0([9_000_000, -9_000_000]) == [0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x80])
    }

    @Test(arguments: [UInt8(0), 1, 2]) func accRawRoundTrip(frameType: UInt8) throws {
        let limit = Int32(1) << (8 * Int32(frameType) + 7)
        let values: [Int32] = [0, -1, 1, limit - 1, -limit, 17, -17, 100, -100].map {
            min(max($0, -limit), limit - 1)
        }
        let content = try #require(PMDACCValues.encodeRaw(values, frameType: frameType))
        let frame = try PMDDataFrame(
            decoding: PMDDataFrame.encode(type: .acc, timestamp: 1, frameType: frameType, content: content)[
                ...])
        #expect(try PMDACCValues.decode(frame) == values)
        #expect(PMDACCValues.encodeRaw(values, frameType: 3) == nil)
    }

    /// The SDK's own compressed frame, decoded, encoded here and decoded again.
    @Test func sdkDeltaFrameReencoded() throws {
        let samples = try PMDDeltaCoding.decode(
            SDKVectors.deltaMultipleBlocks[...], channels: 3, resolution: 16)
        for block in [1, 9, 32, 255] {
            let bytes = PMDDeltaCoding.encode(samples, channels: 3, resolution: 16, blockSamples: block)
            #expect(try PMDDeltaCoding.decode(bytes[...], channels: 3, resolution: 16) == samples)
        }
        // As small as the sensor's own: 3- and 4-bit deltas.
        #expect(PMDDeltaCoding.encode(samples, channels: 3, resolution: 16, blockSamples: 30).count <= 230)
    }

    @Test func randomDeltaFramesRoundTrip() throws {
        var random = MalformedFrameTests.SplitMix(state: 2024)
        for round in 0..<300 {
            let channels = [1, 3, 4][round % 3]
            let resolution = [16, 24, 32][round / 3 % 3]
            let count = Int.random(in: 1...80, using: &random)
            let spread = Int32([1, 40, 3000, 1 << 20][round % 4])
            var samples: [Int32] = []
            let limit = resolution == 32 ? Int64(Int32.max) : (Int64(1) << (resolution - 1)) - 1
            for index in 0..<(count * channels) {
                let previous = index >= channels ? Int64(samples[index - channels]) : 0
                let next = previous + Int64(Int32.random(in: -spread...spread, using: &random))
                samples.append(Int32(min(max(next, -limit), limit)))
            }
            let bytes = PMDDeltaCoding.encode(
                samples, channels: channels, resolution: resolution,
                blockSamples: Int.random(in: 1...255, using: &random))
            #expect(
                try PMDDeltaCoding.decode(bytes[...], channels: channels, resolution: resolution) == samples)
        }
    }

    /// A compressed acceleration frame as a sensor sends one, through the decoder with times.
    @Test func compressedACCFrameThroughTheDecoder() throws {
        var xyz: [Int32] = []
        for index in 0..<36 {
            let i = Int32(index)
            xyz += [-15 + i, 20 - 2 * i, 1008 + i % 3]
        }
        let content = PMDDeltaCoding.encode(xyz, channels: 3, resolution: 16)
        let bytes = PMDDataFrame.encode(
            type: .acc, timestamp: 700_000_000_000_000_000, frameType: 1, compressed: true, content: content)
        var decoder = PMDDecoder()
        decoder.started(.acc, selected: .h10ACC(rate: 200, rangeG: 8))
        guard case .acc(let samples) = try decoder.decode(bytes[...]).data else {
            Issue.record("not ACC")
            return
        }
        #expect(samples.flatMap { [$0.x, $0.y, $0.z] } == xyz)
        #expect(samples.last?.timestamp == 700_000_000_000_000_000)
        #expect(samples.first?.timestamp == 700_000_000_000_000_000 - 35 * 5_000_000)
    }

    @Test func bitsNeeded() {
        #expect(PMDDeltaCoding.bitsNeeded(0) == 1 && PMDDeltaCoding.bitsNeeded(-1) == 1)
        #expect(PMDDeltaCoding.bitsNeeded(1) == 2 && PMDDeltaCoding.bitsNeeded(-2) == 2)
        #expect(PMDDeltaCoding.bitsNeeded(127) == 8 && PMDDeltaCoding.bitsNeeded(-128) == 8)
        #expect(PMDDeltaCoding.bitsNeeded(128) == 9)
        #expect(PMDDeltaCoding.bitsNeeded(.max) == 32 && PMDDeltaCoding.bitsNeeded(.min) == 32)
    }
}
