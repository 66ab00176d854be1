/// DFA alpha1 over every beat of a stream, one beat at a time in O(1) memory: what a whole
/// session's summary needs, where keeping every beat would grow without bound.
///
/// It gives what `DetrendedFluctuation` gives over the same beats (to rounding): the boxes are the
/// same non-overlapping boxes from the start, and each completed box keeps only its residual sum
/// of squares. The profile is summed against the first beat rather than the mean (unknown until
/// the end): the two profiles differ by a line in the beat index, which each box's least-squares
/// line removes, and so do the residuals not at all.
struct StreamingDFA: Sendable {
    /// One box size's sums: the box being filled, and the residuals of the completed ones.
    private struct Boxes: Sendable {
        let size: Int
        var filled = 0
        /// The profile at the box's first beat: subtracted so that the sums stay small.
        var base = 0.0
        var sum = 0.0
        var sumSquares = 0.0
        var sumXY = 0.0
        var residuals = 0.0
        var completed = 0

        mutating func add(_ y: Double) {
            if filled == 0 { base = y }
            let value = y - base
            sum += value
            sumSquares += value * value
            sumXY += Double(filled) * value
            filled += 1
            guard filled == size else { return }
            // Residual sum of squares of a least-squares line over x = 0..<n (as in
            // `DetrendedFluctuation.fluctuation`).
            let n = Double(size)
            let sxx = n * (n * n - 1) / 12
            let syy = sumSquares - sum * sum / n
            let sxy = sumXY - (n - 1) / 2 * sum
            residuals += max(syy - sxy * sxy / sxx, 0)
            completed += 1
            (filled, sum, sumSquares, sumXY) = (0, 0, 0, 0)
        }

        var fluctuation: Double? {
            completed > 0 ? (residuals / Double(completed * size)).squareRoot() : nil
        }
    }

    private var reference: Double? = nil
    private var profile = 0.0
    private(set) var count = 0
    private var boxes = DetrendedFluctuation.boxSizes.map { Boxes(size: $0) }

    mutating func append(_ milliseconds: Double) {
        let reference = self.reference ?? milliseconds
        self.reference = reference
        profile += milliseconds - reference
        count += 1
        for index in boxes.indices { boxes[index].add(profile) }
    }

    /// nil below 50 beats, as `DetrendedFluctuation.alpha1`.
    var alpha1: Double? {
        guard count >= DetrendedFluctuation.minimumBeats else { return nil }
        return DetrendedFluctuation.slope { size in
            boxes[size - DetrendedFluctuation.boxSizes.lowerBound].fluctuation
        }
    }
}
