/// Finds ectopic beats in a whole series by their shape: a premature beat and its compensatory
/// pause, against what the beats around them predict. Only for whole series (`hrm hrv`): it looks
/// 45 beats ahead.
///
/// For each RR j, a cubic through RRs j − 2, j − 1, j + 2 and j + 3 predicts RRs j and j + 1;
/// with r(j), r(j + 1) the RRs minus their predictions and m the median of the 11 RRs around j,
/// the pair's alternation is s(j) = (r(j + 1) − r(j)) / 2m and its excess c(j) = (r(j + 1) +
/// r(j)) / 2m. An ectopic beat is short where a compensatory pause follows, with their total
/// about what was predicted: s(j) is large and positive, c(j) small. Respiratory sinus arrhythmia
/// is smooth at the scale of four beats, so the cubic follows it and leaves s(j) small, where the
/// differences between successive RRs (the paper's dRR) are as large as a mild ectopic beat's.
///
/// RR j starts an ectopic pair when s(j) is above `scaleMultiple` times the median of |s| over
/// the 91 RRs around j (a median, not a quartile deviation: each ectopic pair makes five large
/// values, and 3 % of ectopic beats would inflate the upper quartile), above `minimumSize` (a
/// pair less premature than that changes little and is as likely noise), at least its
/// neighbours' s, and with RR j short and RR j + 1 long against their predictions: −s(j) < c(j)
/// < 0.75 s(j), so each carries its share (a missed beat, long alone, or an extra one, two
/// short RRs, is no pair; the paper's rule takes those). The compensation need not be full: an
/// atrial premature beat's pause is often shorter. RR j must also fall below RR j − 1 by a
/// quarter of s(j) (`dropShare`).
///
/// Measured on 50 seeded series of a 55 bpm heart with ±6 bpm of sinus arrhythmia and 3 % ectopic
/// beats 60-80 % premature (Tests/HRVCheck/sweep.py): the whole-run corrector with these pairs
/// has a median RMSSD error of 0.7 % and a worst of 3.9 %, where the live corrector has 4.0 % and
/// 17.5 % and the centred median without the pairs 3.1 % and 17.4 % (Tests/HRVCheck/whole_variants.py,
/// a Python replica); no beat of the corpus's clean series is changed. The corrector passes over a
/// pair whose premature beat follows a beat it corrected: the cubic then ran through an artefact.
enum EctopicPairs {
    /// How far above the local median of |s| a pair must lie.
    static let scaleMultiple = 6.0
    /// The smallest s counted: 8 % of the local median RR.
    static let minimumSize = 0.08
    /// How much of the alternation the premature beat must carry: c(j) below this times s(j), so
    /// that RR j is short by at least a quarter of s(j) (a missed beat after a normal one, long
    /// alone, is no pair).
    static let shortShare = 0.75
    /// How far RR j must fall below RR j − 1, as a share of s(j) (in units of the median): a
    /// premature beat comes early against the beat before it too, where a sudden slowing (a short
    /// RR no shorter than the one before, then a long one) has the cubic's shape but is no pair.
    static let dropShare = 0.25
    /// RRs either side of j in the median of |s|, and in the median RR.
    static let scaleHalfWidth = 45
    static let medianHalfWidth = 5

    /// The cubic's weights on RRs j − 2, j − 1, j + 2, j + 3 for RR j (Lagrange, nodes −2, −1, 2,
    /// 3, at 0), and for RR j + 1 (at 1: the same, mirrored).
    static let weightsAt0 = (-0.3, 1.0, 0.5, -0.2)
    static let weightsAt1 = (-0.2, 0.5, 1.0, -0.3)

    /// The indexes j in `rr` (milliseconds, every one finite and positive) of the RRs that start
    /// an ectopic pair (j is the premature beat, j + 1 its compensatory pause), in order.
    static func starts(in rr: [Double]) -> [Int] {
        let count = rr.count
        guard count >= 2 * medianHalfWidth + 1 else { return [] }
        var alternation = [Double](repeating: 0, count: count)
        var excess = [Double](repeating: 0, count: count)
        // Whether RR j falls below RR j − 1 by `dropShare` of the alternation (in ms, once known).
        var drops = [Bool](repeating: false, count: count)
        if count >= 6 {
            for j in 2..<(count - 3) {
                let median = localMedian(rr, at: j)
                guard median > 0 else { continue }
                let (a0, a1, a2, a3) = weightsAt0
                let (b0, b1, b2, b3) = weightsAt1
                let predicted = a0 * rr[j - 2] + a1 * rr[j - 1] + a2 * rr[j + 2] + a3 * rr[j + 3]
                let predictedNext = b0 * rr[j - 2] + b1 * rr[j - 1] + b2 * rr[j + 2] + b3 * rr[j + 3]
                let residual = rr[j] - predicted
                let residualNext = rr[j + 1] - predictedNext
                let s = (residualNext - residual) / (2 * median)
                let c = (residualNext + residual) / (2 * median)
                // Absurd RRs (the library takes any finite value) could overflow: no pair there.
                guard s.isFinite, c.isFinite else { continue }
                alternation[j] = s
                excess[j] = c
                drops[j] = rr[j] < rr[j - 1] - dropShare * alternation[j] * median
            }
        }
        var scale = SortedWindow()
        var low = 0
        var high = -1
        var found: [Int] = []
        for j in 0..<count {
            // The window of |s| over j − 45 ... j + 45, clipped at the ends.
            while high < min(count - 1, j + scaleHalfWidth) {
                high += 1
                scale.insert(abs(alternation[high]))
            }
            while low < j - scaleHalfWidth {
                scale.remove(abs(alternation[low]))
                low += 1
            }
            let s = alternation[j]
            guard s > minimumSize, s > scaleMultiple * scale.median, excess[j] < shortShare * s,
                excess[j] > -s, drops[j]
            else {
                continue
            }
            if j > 0, alternation[j - 1] > s { continue }
            if j + 1 < count, alternation[j + 1] > s { continue }
            found.append(j)
        }
        return found
    }

    /// The median of the RRs from j − 5 to j + 5 (those there are).
    static func localMedian(_ rr: [Double], at j: Int) -> Double {
        let lower = max(j - medianHalfWidth, 0)
        let upper = min(j + medianHalfWidth, rr.count - 1)
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * medianHalfWidth + 1) { buffer in
            // Insertion sort, no allocation: at most 11 values.
            var count = 0
            for index in lower...upper {
                let value = rr[index]
                var slot = count
                while slot > 0, buffer[slot - 1] > value {
                    buffer[slot] = buffer[slot - 1]
                    slot -= 1
                }
                buffer[slot] = value
                count += 1
            }
            let middle = count / 2
            return count % 2 == 1 ? buffer[middle] : (buffer[middle - 1] + buffer[middle]) / 2
        }
    }
}

/// Values kept sorted as they come and go, for a sliding median.
struct SortedWindow: Sendable {
    private var sorted: [Double] = []

    mutating func insert(_ value: Double) {
        sorted.insert(value, at: index(of: value))
    }

    /// Removes one value equal to `value`, if any.
    mutating func remove(_ value: Double) {
        let at = index(of: value)
        if at < sorted.count, sorted[at] == value { sorted.remove(at: at) }
    }

    /// The median (the mean of the two middle values for an even count); 0 when empty.
    var median: Double {
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The first index whose value is not below `value`.
    private func index(of value: Double) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
