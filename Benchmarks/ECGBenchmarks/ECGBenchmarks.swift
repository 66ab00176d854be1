import Benchmark
import ECG
import Foundation
import PolarPMD

/// What `hrm watch --ecg --acc` spends per sample: decoding the Polar H10's PMD frames (ECG type 0,
/// raw and delta-compressed acceleration) and finding R peaks in the ECG. Per-sample figures:
/// each benchmark handles `scaledIterations` samples (the scaling factor is 1000), frames of 73
/// ECG samples or 36 acceleration samples as an H10 sends them.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .instructions],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 100
    )
    // Two minutes of ECG at 130 Hz: an R wave of 1.2 mV every 0.8 s, a T wave, baseline wander
    // and noise from a fixed generator.
    var seed: UInt64 = 1
    func noise() -> Double {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(Int64(bitPattern: seed >> 11) % 1000) / 1000 - 0.5
    }
    let ecg: [Int32] = (0..<(130 * 120)).map { index in
        let t = Double(index) / 130
        let phase = t.truncatingRemainder(dividingBy: 0.8) - 0.4
        var value = 80 * sin(2 * Double.pi * 0.25 * t) + 30 * noise()
        value += 1200 * exp(-phase * phase / (2 * 0.012 * 0.012))
        value += 250 * exp(-(phase - 0.25) * (phase - 0.25) / (2 * 0.04 * 0.04))
        return Int32(value.rounded())
    }
    let start = PMDTime.h10DefaultClock
    let ecgFrames: [[UInt8]] = stride(from: 0, to: ecg.count - 72, by: 73).map { index in
        PMDDataFrame.encode(
            type: .ecg, timestamp: start + UInt64((Double(index + 72) * 1e9 / 130).rounded()), frameType: 0,
            content: PMDECGValues.encodeType0(Array(ecg[index..<(index + 73)])))
    }
    let acc: [Int32] = (0..<(200 * 60)).flatMap { index -> [Int32] in
        let t = Double(index) / 200
        return [Int32(40 * sin(t)), Int32(-20 * cos(t)), 1000 + Int32(15 * noise())]
    }
    let accRaw: [[UInt8]] = stride(from: 0, to: acc.count / 3 - 35, by: 36).map { sample in
        PMDDataFrame.encode(
            type: .acc, timestamp: start + UInt64(sample + 35) * 5_000_000, frameType: 1,
            content: PMDACCValues.encodeRaw(Array(acc[(3 * sample)..<(3 * (sample + 36))]), frameType: 1)
                ?? [])
    }
    let accCompressed: [[UInt8]] = stride(from: 0, to: acc.count / 3 - 35, by: 36).map { sample in
        PMDDataFrame.encode(
            type: .acc, timestamp: start + UInt64(sample + 35) * 5_000_000, frameType: 1, compressed: true,
            content: PMDDeltaCoding.encode(
                Array(acc[(3 * sample)..<(3 * (sample + 36))]), channels: 3, resolution: 16))
    }

    /// Decodes frames until `samples` samples went through.
    func decode(_ frames: [[UInt8]], samples: Int, perFrame: Int, type: PMDMeasurementType, rate: Int) -> Int
    {
        var decoder = PMDDecoder()
        decoder.set(type, PMDDecoder.StreamSettings(sampleRate: rate))
        var done = 0
        var index = 0
        var checksum = 0
        while done < samples {
            if let decoded = try? decoder.decode(frames[index][...]) {
                switch decoded.data {
                case .ecg(let values): checksum &+= values.count
                case .acc(let values): checksum &+= values.count
                case .other: break
                }
            }
            done += perFrame
            index += 1
            if index == frames.count {
                index = 0
                decoder.reset()
            }
        }
        return checksum
    }

    Benchmark("PMD ECG frame decode, per sample") { benchmark in
        blackHole(
            decode(ecgFrames, samples: benchmark.scaledIterations.count, perFrame: 73, type: .ecg, rate: 130))
    }

    Benchmark("PMD acceleration raw frame decode, per sample") { benchmark in
        blackHole(
            decode(accRaw, samples: benchmark.scaledIterations.count, perFrame: 36, type: .acc, rate: 200))
    }

    Benchmark("PMD acceleration delta-compressed frame decode, per sample") { benchmark in
        blackHole(
            decode(
                accCompressed, samples: benchmark.scaledIterations.count, perFrame: 36, type: .acc, rate: 200)
        )
    }

    Benchmark("R-peak detection, per sample") { benchmark in
        var detector = RPeakDetector(sampleRate: 130)
        var peaks = 0
        var index = 0
        // Warm: the filters and the threshold settled, as after the first seconds of a stream.
        for sample in ecg.prefix(1300) {
            if detector.process(Double(sample), time: Int64(index) * 7_692_308) != nil { peaks += 1 }
            index += 1
        }
        benchmark.startMeasurement()
        for _ in 0..<benchmark.scaledIterations.count {
            let sample = ecg[index % ecg.count]
            if detector.process(Double(sample), time: Int64(index) * 7_692_308) != nil { peaks += 1 }
            index += 1
        }
        benchmark.stopMeasurement()
        blackHole(peaks)
    }
}
