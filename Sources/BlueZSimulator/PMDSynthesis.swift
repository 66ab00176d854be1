#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A single-lead ECG as an H10 measures it, in microvolts: a PQRST complex around each beat's R
/// peak (sums of Gaussians, as ECGSYN draws them), the R wave's height swaying with breathing,
/// baseline wander and white noise.
struct ECGSynthesis: Sendable {
    /// The R wave's height, microvolts.
    let amplitude: Double
    /// The noise's standard deviation, microvolts.
    let noise: Double
    private var random: SeededRandom

    /// The waves of one complex: offset from the R peak (s), height (of the R wave's), width (s).
    private static let waves: [(offset: Double, height: Double, width: Double)] = [
        (-0.200, 0.12, 0.025),  // P
        (-0.030, -0.10, 0.008),  // Q
        (0.000, 1.00, 0.009),  // R
        (0.030, -0.25, 0.009),  // S
        (0.240, 0.25, 0.045),  // T
    ]

    /// How far a complex reaches before and after its R peak, in seconds.
    static let reach = (before: 0.3, after: 0.45)

    init(amplitude: Double, noise: Double, seed: UInt64) {
        self.amplitude = amplitude
        self.noise = noise
        random = SeededRandom(seed: seed)
    }

    /// The ECG at `time` (seconds) given the R peaks `beats` near it (seconds, any order).
    mutating func value(at time: Double, beats: ArraySlice<Double>) -> Double {
        var value = 60 * sin(2 * .pi * 0.22 * time) + 30 * sin(2 * .pi * 0.05 * time + 1.3)
        for beat in beats {
            let since = time - beat
            guard since > -Self.reach.before && since < Self.reach.after else { continue }
            // Breathing (0.25 Hz) moves the heart's axis: the complex grows and shrinks by 8 %.
            let height = amplitude * (1 + 0.08 * sin(2 * .pi * 0.25 * beat))
            for wave in Self.waves {
                let x = (since - wave.offset) / wave.width
                value += height * wave.height * exp(-0.5 * x * x)
            }
        }
        return value + noise * random.gaussian()
    }
}

/// An H10's accelerometer on a chest, in milli-g: gravity on x (the strap upright), breathing on
/// x and y, a walking sway on y and z, and noise.
struct ACCSynthesis: Sendable {
    private var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    /// x, y and z at `time` (seconds), clamped to ±`rangeG` g.
    mutating func value(at time: Double, rangeG: Int) -> (Int32, Int32, Int32) {
        let breathing = 2 * .pi * 0.25 * time
        let step = 2 * .pi * 1.7 * time
        let x = -980 + 25 * sin(breathing) + 30 * sin(2 * step) + 6 * random.gaussian()
        let y = 40 * sin(step) + 15 * sin(breathing + 0.7) + 6 * random.gaussian()
        let z = 150 + 90 * sin(step + 0.9) + 6 * random.gaussian()
        let limit = Double(rangeG * 1000)
        func clamp(_ value: Double) -> Int32 { Int32(min(max(value, -limit), limit - 1).rounded()) }
        return (clamp(x), clamp(y), clamp(z))
    }
}
