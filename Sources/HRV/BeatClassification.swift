/// One beat's neighbourhood in Lipponen & Tarvainen's (2019) normalised subspaces: the
/// successive differences dRR divided by threshold 1, the deviation from the local median mRR
/// divided by threshold 2.
struct BeatNeighbourhood: Sendable, Equatable {
    /// dRR(j) / th1: this RR minus the NN interval before it; 0 for the first beat of a run.
    var difference: Double
    /// dRR(j − 1) / th1, between the two NN intervals before this beat; nil when unknown.
    var differenceBefore: Double?
    /// dRR(j + 1) / th1, from this RR to the next; nil when there is no next beat yet.
    var differenceAfter: Double?
    /// dRR(j + 2) / th1; nil when unknown.
    var differenceAfterNext: Double?
    /// mRR(j) / th2: this RR minus the local median, negative deviations doubled (as in the paper).
    var medianDeviation: Double
    /// Whether the RR is above the local median.
    var aboveMedian: Bool
    /// Whether the beat is the paper's second candidate: the one after a beat with a large
    /// difference that was not ectopic, when its own difference is the smaller of the two after
    /// that beat. Only such a beat may be called long or short by its median deviation alone.
    var secondCandidate = false
}

/// What Lipponen & Tarvainen's decision rule (their Figure 1) makes of a beat.
enum BeatVerdict: Sendable, Equatable {
    case normal
    /// An NPN or PNP pattern in dRR (their equations 1 and 2).
    case ectopic
    /// A long RR (equation 3, or a large mRR above the median): a missed beat or a long beat.
    case long
    /// A short RR (equation 5, or a large mRR below the median): an extra beat or a short beat.
    case short
}

extension BeatNeighbourhood {
    /// The paper's constants: the slope and offset of the ectopic regions in subspace S1.
    static let c1 = 0.13
    static let c2 = 0.17

    var verdict: BeatVerdict {
        let largeDifference = abs(difference) > 1
        // The paper's Figure 1 looks at a beat only when its difference is large (or it is the
        // second candidate): the median of 11 beats is a poor guess of the beat at hand under
        // strong sinus arrhythmia, so a median deviation alone would flag clean beats.
        guard largeDifference || secondCandidate else { return .normal }
        if largeDifference {
            // S12: the neighbouring dRR that best argues against an ectopic pattern.
            let s12 = Self.extreme(differenceBefore, differenceAfter, largest: difference > 0)
            if difference > 1, s12 < -Self.c1 * difference - Self.c2 { return .ectopic }
            if difference < -1, s12 > -Self.c1 * difference + Self.c2 { return .ectopic }
        }
        let largeDeviation = abs(medianDeviation) > 3
        guard largeDifference || largeDeviation else { return .normal }
        // S22: the two following dRRs, a long beat being followed by a fall, a short by a rise.
        let s22 = Self.extreme(differenceAfter, differenceAfterNext, largest: difference < 0)
        if (difference > 1 && s22 < -1) || (largeDeviation && aboveMedian) { return .long }
        if (difference < -1 && s22 > 1) || (largeDeviation && !aboveMedian) { return .short }
        return .normal
    }

    /// Whether the next beat is the paper's second candidate, should this beat not be ectopic: this
    /// one's difference is large and the next one's smaller than the one after it.
    var nominatesNext: Bool {
        guard abs(difference) > 1, let after = differenceAfter, let afterNext = differenceAfterNext else {
            return false
        }
        return abs(after) < abs(afterNext)
    }

    /// Evidence a verdict needs before the beat is corrected, beyond the paper's rule: a median
    /// deviation above `strongDeviation`, or a difference above `strongEctopicDifference` (an
    /// ectopic verdict) or `strongDifference` (long, short), or for an ectopic verdict a
    /// difference above `alternatingDifference` with those on both sides beyond threshold 1
    /// against its sign (three in a row in alternation: the pattern of one beat out of place). Without it, strong sinus
    /// arrhythmia and ordinary noise are "corrected" (see `ArtefactCorrector`).
    static let strongDeviation = 2.5
    static let strongEctopicDifference = 2.0
    static let strongDifference = 2.5
    /// The difference an ectopic beat in alternation needs (its neighbours' need 1).
    static let alternatingDifference = 1.5

    /// `verdict` if the evidence is strong enough, else normal.
    func confirmed(_ verdict: BeatVerdict) -> BeatVerdict {
        guard verdict != .normal, abs(medianDeviation) <= Self.strongDeviation else { return verdict }
        if verdict == .ectopic, abs(difference) > Self.alternatingDifference, let before = differenceBefore,
            let after = differenceAfter,
            difference * before < 0, difference * after < 0, min(abs(before), abs(after)) > 1
        {
            return verdict
        }
        let needed = verdict == .ectopic ? Self.strongEctopicDifference : Self.strongDifference
        return abs(difference) > needed ? verdict : .normal
    }

    /// The largest (or smallest) of the known values; 0 when neither is known.
    private static func extreme(_ a: Double?, _ b: Double?, largest: Bool) -> Double {
        switch (a, b) {
        case let (a?, b?): largest ? max(a, b) : min(a, b)
        case let (a?, nil): a
        case let (nil, b?): b
        case (nil, nil): 0
        }
    }
}
