import Benchmark
import HeartRate

/// Decoder throughput and heap allocations.
///
/// Each sample decodes one million frames (`scalingFactor: .mega`), so throughput reads in
/// M frames/s, and a sample's malloc count divided by 10^6 is the allocations per frame. The
/// `baseline` benchmark runs the same loop without decoding: its malloc count is the harness's
/// own, to subtract.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .mega,
        maxDuration: .seconds(3),
        maxIterations: 30
    )

    // (a) UINT8 value, sensor contact detected, nothing else: 06 48.
    let uint8Frame: [UInt8] = [0x06, 0x48]
    // (b) UINT16 value, contact detected, energy expended and 9 RR intervals (23 bytes).
    var uint16Frame: [UInt8] = [0x1F, 0x2C, 0x01, 0x10, 0x27]
    for i in 0..<9 { uint16Frame += [UInt8(truncatingIfNeeded: 0x4D + i), 0x03] }

    Benchmark("baseline (loop only)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(uint8Frame)
        }
    }

    Benchmark("decode UINT8, no RR") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? HeartRateMeasurement(decoding: uint8Frame).heartRate)
        }
    }

    Benchmark("decode UINT16, energy, 9 RR") { benchmark in
        for _ in benchmark.scaledIterations {
            let m = try? HeartRateMeasurement(decoding: uint16Frame)
            blackHole(m?.heartRate)
            blackHole(m?.energyExpended)
            blackHole(m?.rrIntervals.count)
        }
    }

    Benchmark("decode UINT16, energy, 9 RR, read every RR") { benchmark in
        for _ in benchmark.scaledIterations {
            if let m = try? HeartRateMeasurement(decoding: uint16Frame) {
                var sum: UInt32 = 0
                for interval in m.rrIntervals { sum &+= UInt32(interval.ticks) }
                blackHole(sum)
            }
        }
    }

    Benchmark("encode UINT16, energy, 9 RR") { benchmark in
        let m = try? HeartRateMeasurement(decoding: uint16Frame)
        for _ in benchmark.scaledIterations {
            blackHole(m?.encoded())
        }
    }

    // Absolute allocation counts: each sample decodes 1000 frames, unscaled, so any allocation
    // per frame shows as 1000 or more (the encoder, which allocates one array, is the control).
    let counting = Benchmark.Configuration(
        metrics: [.mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(1), maxIterations: 100)

    Benchmark("allocations per 1000: decode UINT8, no RR", configuration: counting) { _ in
        for _ in 0..<1000 { blackHole(try? HeartRateMeasurement(decoding: uint8Frame)) }
    }

    Benchmark("allocations per 1000: decode UINT16, energy, 9 RR", configuration: counting) { _ in
        for _ in 0..<1000 { blackHole(try? HeartRateMeasurement(decoding: uint16Frame)) }
    }

    Benchmark("allocations per 1000: encode UINT16, energy, 9 RR", configuration: counting) { _ in
        let m = try? HeartRateMeasurement(decoding: uint16Frame)
        for _ in 0..<1000 { blackHole(m?.encoded()) }
    }
}
