/// Seeded random numbers and synthetic RR series for the HRV tests: deterministic, so every
/// bound below was checked against exactly the series the tests use.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A standard normal deviate (Box-Muller).
    mutating func gaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * logarithm(u1)).squareRoot() * cosine(2 * Double.pi * u2)
    }
}

/// White noise around `mean` with standard deviation `sd`.
func whiteNoise(count: Int, mean: Double = 800, sd: Double = 40, seed: UInt64) -> [Double] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in mean + sd * random.gaussian() }
}

/// A random walk: the cumulative sum of white noise, around `mean`.
func randomWalk(count: Int, mean: Double = 800, step: Double = 10, seed: UInt64) -> [Double] {
    var random = SplitMix64(seed: seed)
    var value = mean
    return (0..<count).map { _ in
        value += step * random.gaussian()
        return value
    }
}

/// Strong respiratory sinus arrhythmia: RR oscillating ±`amplitude` ms at `hertz` around
/// `mean`, the phase following the beats' own times, plus a little white noise.
func sinusArrhythmia(
    count: Int, mean: Double = 900, amplitude: Double = 150, hertz: Double = 0.25, noise: Double = 0,
    seed: UInt64 = 1
) -> [Double] {
    var random = SplitMix64(seed: seed)
    var seconds = 0.0
    return (0..<count).map { _ in
        let rr = mean + amplitude * sine(2 * Double.pi * hertz * seconds) + noise * random.gaussian()
        seconds += rr / 1000
        return rr
    }
}
