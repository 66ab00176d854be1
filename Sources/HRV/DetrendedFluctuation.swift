#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Detrended fluctuation analysis, short-term exponent (alpha1), as Kubios and the literature on
/// exercise thresholds use it.
///
/// The profile y is the cumulative sum of NN − mean NN. For every box size n from 4 to 16 beats,
/// y is cut into non-overlapping boxes of n from the start (the incomplete tail is dropped), a
/// least-squares line is removed from each box, and F(n) is the root mean square of all the
/// residuals. alpha1 is the least-squares slope of log10 F(n) against log10 n.
///
/// Cost: one pass over the beats per box size (13 in all), one allocation for the profile.
enum DetrendedFluctuation {
    static let boxSizes = 4...16
    /// Fewer NN intervals than this give no alpha1: the largest boxes would be too few.
    static let minimumBeats = 50

    /// alpha1 of `nn` (milliseconds); nil below 50 intervals, or when a fluctuation is zero or
    /// not finite (a constant series, or non-finite values).
    static func alpha1(_ nn: some Collection<Double>) -> Double? {
        let count = nn.count
        guard count >= minimumBeats, let first = nn.first else { return nil }
        // The mean relative to the first value, so that large values lose no precision.
        var offsetSum = 0.0
        for value in nn { offsetSum += value - first }
        let mean = first + offsetSum / Double(count)
        guard mean.isFinite else { return nil }

        let profile = [Double](unsafeUninitializedCapacity: count) { buffer, initialized in
            var running = 0.0
            for (index, value) in nn.enumerated() {
                running += value - mean
                buffer[index] = running
            }
            initialized = count
        }
        return profile.withUnsafeBufferPointer { slope(of: $0) }
    }

    /// The slope of log10 F(n) against log10 n over the box sizes.
    private static func slope(of profile: UnsafeBufferPointer<Double>) -> Double? {
        slope { fluctuation(of: profile, boxSize: $0) }
    }

    /// The least-squares slope of log10 F(n) against log10 n for n in `boxSizes`; nil when an
    /// F(n) is missing, zero or not finite. Shared with `StreamingDFA`.
    static func slope(_ fluctuation: (Int) -> Double?) -> Double? {
        var sumX = 0.0
        var sumY = 0.0
        var sumXX = 0.0
        var sumXY = 0.0
        for size in boxSizes {
            guard let value = fluctuation(size), value > 0, value.isFinite else { return nil }
            let x = log10(Double(size))
            let y = log10(value)
            sumX += x
            sumY += y
            sumXX += x * x
            sumXY += x * y
        }
        let points = Double(boxSizes.count)
        return (points * sumXY - sumX * sumY) / (points * sumXX - sumX * sumX)
    }

    /// F(n): the root mean square of the residuals from each box's least-squares line.
    ///
    /// Per box, with x = 0..<n: residual sum of squares = Syy − Sxy² / Sxx, where
    /// Sxx = n(n² − 1)/12. The box's first profile value is subtracted first, so the sums stay
    /// small even where the profile has wandered far from zero.
    private static func fluctuation(of profile: UnsafeBufferPointer<Double>, boxSize size: Int) -> Double? {
        let boxes = profile.count / size
        guard boxes > 0 else { return nil }
        let n = Double(size)
        let meanX = (n - 1) / 2
        let sxx = n * (n * n - 1) / 12
        var residuals = 0.0
        for box in 0..<boxes {
            let start = box * size
            let base = profile[start]
            var sum = 0.0
            var sumSquares = 0.0
            var sumXY = 0.0
            for i in 0..<size {
                let y = profile[start + i] - base
                sum += y
                sumSquares += y * y
                sumXY += Double(i) * y
            }
            let syy = sumSquares - sum * sum / n
            let sxy = sumXY - meanX * sum
            residuals += max(syy - sxy * sxy / sxx, 0)
        }
        return (residuals / Double(boxes * size)).squareRoot()
    }
}
