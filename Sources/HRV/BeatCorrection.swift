/// How a beat found abnormal is corrected, each with the value(s) it gets.
enum BeatCorrection: Sendable, Equatable {
    /// The RR and the next are one beat split by an extra detection: they merge.
    case extra(merged: Double)
    /// The RR spans two beats (a missed detection): it splits into two equal halves.
    case missed(half: Double)
    /// An ectopic beat and its compensation (either order): both become their mean, which keeps
    /// the pair's total.
    case pairWithNext(mean: Double)
    /// The same with the NN interval before (still held back, not corrected).
    case pairWithPrevious(mean: Double)
    /// None of those fits: the RR is replaced by the mean of its neighbours.
    case interpolated(Double)
}

/// The RRs and NN intervals around the beat to correct, in milliseconds (nil where unknown).
struct Neighbours: Sendable, Equatable {
    /// The NN interval before `previous`.
    var beforePrevious: Double?
    /// The NN interval before the beat, when it is still held back and was not corrected (it
    /// can then pair with the beat).
    var previous: Double?
    var rr: Double
    var next: Double?
    var afterNext: Double?
}

extension BeatCorrection {
    /// Picks the correction that best fits the beat's surroundings.
    ///
    /// Each candidate is scored by how far its corrected value lies from what the unaffected
    /// neighbours on either side predict (their mean; a neighbour more than `tolerance` from the
    /// local median counts as the median). This matters under strong respiratory sinus
    /// arrhythmia, where the median of 11 beats is a poor guess of the beat at hand. The best
    /// candidate wins if it lies within `tolerance` of its prediction; otherwise the beat is
    /// interpolated. Extra detections are only considered below the median, missed ones above,
    /// pairs only across it. The pair's partner follows from the verdict: an ectopic verdict
    /// marks the middle of an up-down-up (or down-up-down) pattern, whose other half is the beat
    /// before (the next one when the one before cannot pair); a long or short one the start of
    /// the pattern, paired with the next. With `medianFits` (whole runs), a missed or an extra
    /// beat's corrected value may instead fit the local median, the paper's own test, when the
    /// neighbours predict worse (a beat between two irregular ones).
    static func correction(
        of around: Neighbours, verdict: BeatVerdict, median: Double, tolerance: Double,
        medianFits: Bool = false
    ) -> BeatCorrection {
        func plausible(_ value: Double?) -> Double {
            guard let value, abs(value - median) < tolerance else { return median }
            return value
        }
        let rr = around.rr
        let before = plausible(around.previous ?? around.beforePrevious)
        let beforeRR = plausible(around.previous)
        let afterRR = plausible(around.next)
        let afterPair = plausible(around.afterNext)
        var best: (correction: BeatCorrection, error: Double)? = nil
        func consider(_ correction: BeatCorrection, value: Double, predicted: Double, orMedian: Bool = false)
        {
            let error = orMedian ? min(abs(value - predicted), abs(value - median)) : abs(value - predicted)
            if error < tolerance, error < best?.error ?? .infinity { best = (correction, error) }
        }
        let side = rr - median
        if side > 0 {
            consider(
                .missed(half: rr / 2), value: rr / 2, predicted: (beforeRR + afterRR) / 2,
                orMedian: medianFits)
        }
        if let next = around.next, side < 0 {
            consider(
                .extra(merged: rr + next), value: rr + next, predicted: (beforeRR + afterPair) / 2,
                orMedian: medianFits)
        }
        let pairsBack = verdict == .ectopic && around.previous.map { side * ($0 - median) < 0 } == true
        if pairsBack, let previous = around.previous {
            let mean = (previous + rr) / 2
            consider(
                .pairWithPrevious(mean: mean), value: mean,
                predicted: (plausible(around.beforePrevious) + afterRR) / 2)
        } else if let next = around.next, side * (next - median) < 0 {
            let mean = (rr + next) / 2
            consider(.pairWithNext(mean: mean), value: mean, predicted: (beforeRR + afterPair) / 2)
        }
        return best?.correction ?? .interpolated((before + afterRR) / 2)
    }
}
