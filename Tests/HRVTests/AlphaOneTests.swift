import HRV
import Testing

/// DFA alpha1 against a plain reference implementation and the known exponents of white noise
/// (0.5 asymptotically) and a random walk (1.5).
@Suite struct AlphaOneTests {
    /// Straight from the definition: per box an explicit least-squares line (slope and intercept)
    /// and its residuals; no closed forms, no shifting.
    static func reference(_ nn: [Double]) -> Double {
        let mean = nn.reduce(0, +) / Double(nn.count)
        var profile: [Double] = []
        var running = 0.0
        for value in nn {
            running += value - mean
            profile.append(running)
        }
        var points: [(x: Double, y: Double)] = []
        for size in 4...16 {
            var squares = 0.0
            var residuals = 0
            for start in stride(from: 0, through: profile.count - size, by: size) {
                let xs = (0..<size).map(Double.init)
                let ys = Array(profile[start..<(start + size)])
                let (slope, intercept) = line(xs, ys)
                for (x, y) in zip(xs, ys) {
                    squares += (y - (intercept + slope * x)) * (y - (intercept + slope * x))
                    residuals += 1
                }
            }
            points.append(
                (logarithm10(Double(size)), logarithm10((squares / Double(residuals)).squareRoot())))
        }
        return line(points.map(\.x), points.map(\.y)).slope
    }

    static func line(_ xs: [Double], _ ys: [Double]) -> (slope: Double, intercept: Double) {
        let n = Double(xs.count)
        let meanX = xs.reduce(0, +) / n
        let meanY = ys.reduce(0, +) / n
        var sxy = 0.0
        var sxx = 0.0
        for (x, y) in zip(xs, ys) {
            sxy += (x - meanX) * (y - meanY)
            sxx += (x - meanX) * (x - meanX)
        }
        return (sxy / sxx, meanY - sxy / sxx * meanX)
    }

    @Test(arguments: [50, 51, 64, 150, 1000])
    func matchesTheReference(count: Int) throws {
        for seed: UInt64 in 1...3 {
            let series = whiteNoise(count: count, seed: seed)
            let alpha1 = try #require(HRV.alpha1(series))
            #expect(abs(alpha1 - Self.reference(series)) < 1e-9)
            let walk = randomWalk(count: count, seed: seed)
            #expect(abs(try #require(HRV.alpha1(walk)) - Self.reference(walk)) < 1e-9)
        }
    }

    /// Small boxes bias DFA upwards: over 4-16 beats white noise gives about 0.6, not 0.5
    /// (neurokit2's fractal_dfa, non-overlapping, gives the same 0.59-0.62 on these series).
    @Test(arguments: 1...8 as ClosedRange<UInt64>)
    func whiteNoiseIsAboutOneHalf(seed: UInt64) throws {
        let alpha1 = try #require(HRV.alpha1(whiteNoise(count: 2000, seed: seed)))
        #expect((0.45...0.75).contains(alpha1))
    }

    @Test(arguments: 1...8 as ClosedRange<UInt64>)
    func randomWalkIsAboutOneAndAHalf(seed: UInt64) throws {
        let alpha1 = try #require(HRV.alpha1(randomWalk(count: 2000, seed: seed)))
        #expect((1.3...1.7).contains(alpha1))
    }

    @Test func nilCases() {
        #expect(HRV.alpha1([]) == nil)
        #expect(HRV.alpha1(Array(repeating: 800, count: 49)) == nil)
        // A constant series has no fluctuation at all: no exponent.
        #expect(HRV.alpha1(Array(repeating: 800, count: 200)) == nil)
        #expect(HRV.alpha1(whiteNoise(count: 100, seed: 1) + [.nan]) == nil)
    }

    /// The profile is taken relative to the mean and each box relative to its first value, so
    /// a large offset changes nothing.
    @Test func offsetDoesNotMatter() throws {
        let series = randomWalk(count: 500, seed: 9)
        let shifted = series.map { $0 + 1e6 }
        let alpha1 = try #require(HRV.alpha1(series))
        #expect(abs(try #require(HRV.alpha1(shifted)) - alpha1) < 1e-6)
    }
}
