/// Finds and corrects missed, extra and ectopic beats in a stream of RR intervals, one beat at a
/// time: live (`init(correcting:explaining:)`, `hrm watch` and `hrm record`), or over a whole run
/// known in advance (`init(wholeRun:)`, through `HRV.correct`: `hrm hrv`).
///
/// Live, a beat is decided once the two RRs after it have arrived, and its NN interval is handed
/// out one decision later (a following ectopic beat may still pair with it), so the output lags
/// the input by three beats; `provisional` gives the held-back beats as they stand.
///
/// A whole run, where waiting costs nothing, takes two things from further ahead: the paper's
/// centred median (5 RRs either side), and the ectopic pairs `EctopicPairs` finds by their shape
/// over the whole run, which are corrected whatever the rule below makes of them (unless the beat
/// before the pair was corrected: the shape was then read against an artefact). That is what
/// finds mild ectopic beats amid strong sinus arrhythmia, whose jumps are no larger than the clean
/// beats' own (Tests/HRVCheck/sweep.py: median RMSSD error 0.7 % where the live corrector has
/// 4.0 %, worst 3.9 % where it has 17.5 %). The thresholds stay the live ones, from the beats
/// decided before (centred ones, from the raw RRs around each beat, let a strap losing its
/// contact inflate them: 15-18 % RMSSD error on the corpus's contact-drop series). A missed or
/// an extra beat's correction may also fit the local median there, the paper's own test
/// (`BeatCorrection`'s `medianFits`).
///
/// ## Detection: Lipponen & Tarvainen 2019 (the Kubios automatic correction), confirmed
/// For each beat j: dRR(j) is the RR minus the NN interval before it (already corrected), mRR(j)
/// the RR minus the median of the 11 RRs around it (negative deviations doubled). Threshold 1 is
/// 5.2 × the quartile deviation of |dRR|, threshold 2 the same of |mRR|; the paper's decision
/// rule (`BeatNeighbourhood.verdict`: its Figure 1, equations 1-5 over the subspaces S11, S12,
/// S21, S22) then calls the beat normal, ectopic, long or short. A beat is looked at only when
/// |dRR| is above threshold 1, or it is the paper's second candidate (the beat after one that
/// was). A verdict other than normal is acted on only with strong evidence
/// (`BeatNeighbourhood.confirmed`): |mRR| above 2.5 × threshold 2, or |dRR| above 2 × threshold 1
/// (ectopic) or 2.5 × (long, short), or for an ectopic verdict |dRR| above 1.5 × threshold 1 with
/// the dRRs before and after beyond threshold 1, against its sign. The paper's rule alone corrects beats of clean series with
/// strong sinus arrhythmia or ordinary noise (neurokit2's implementation flags 16 of 600 beats
/// of a noisy sitter); a missed or extra beat is far beyond those bounds, and so is an ectopic
/// beat unless it is as mild as the noise around it.

/// ## Correction, and how `artefacts` counts each kind
/// A beat that is not normal gets the correction that best fits its unaffected neighbours
/// (`BeatCorrection`); with m the local median and th2 threshold 2:
/// - extra beat (a short RR whose sum with the next fits): the two merge into one NN interval,
///   which counts 2 (both RRs removed, one NN made of them);
/// - missed beat (a long RR whose half fits): split into two equal NN intervals, each counting
///   1 (2 in all: the one RR became two NNs);
/// - ectopic beat and its compensation (a short and a long RR, either order, the RR paired with
///   the one before or after as the verdict says): both become their mean, which keeps the
///   pair's total; each counts 1;
/// - otherwise (an isolated long or short RR): replaced by the mean of its neighbours; counts 1.
/// An RR that is not finite or not positive is removed and counts 1 on the next NN interval
/// (which keeps its value but not its successive difference); such RRs at the very end of a run
/// count in `artefacts` but on no NN interval. `artefacts` is otherwise the sum of the NN
/// intervals' counts.
///
/// A corrected NN interval has `artefacts > 0` and `differenceUsable == false`, and so has the
/// NN interval after it (its difference involves a corrected beat) and the first of each run.
///
/// ## Deviations from the paper, because a stream cannot look 45 beats ahead
/// Each one's cost, measured on the corpus of Tests/HRVCheck (README, "How hrm corrects
/// artefacts"), is in the README's table of variants.
/// - The thresholds use a trailing window of the 91 beats decided last, not 45 beats either
///   side (61 did about as well on clean series and missed more mild ectopic beats). The window
///   holds each beat's |dRR| and |mRR| divided by its local
///   median, and a threshold is that quartile deviation times the median of the beat decided,
///   so that sinus arrhythmia, larger in milliseconds at a lower heart rate, is not judged by
///   the beats of a faster stretch.
/// - A beat found abnormal adds at most half of each threshold to the windows, not its own
///   value: a run of artefacts (a strap losing contact) would otherwise inflate the thresholds
///   until they let the artefacts through, while a lasting change of rhythm still raises them.
///   Until a run decides its first beat, the windows take the RRs as received.
/// - Live, the median window is trailing: 8 RRs before the beat and 2 after it, not 5 and 5 (a
///   centred one would make the output lag 6 beats; a whole run takes the centred one).
/// - dRR(j) is taken against the NN interval before the beat, already corrected, where the paper
///   runs on the raw series and Kubios iterates; each beat is decided once, in order (the
///   paper's second candidate, j + 1, gets its own turn next).
/// - Neither threshold falls below 5 % of the local median (`minimumThreshold`): in series so
///   regular that the quartile deviation is nearly zero (a metronome-like test signal, an
///   exercising athlete) the paper's thresholds would flag plain noise.
/// - Warm-up: nothing is decided until a run has `warmUpBeats` beats (its first beats are then
///   decided with thresholds from those), and a run that ends shorter passes through untouched.
///   Each run (see `endRun`) starts afresh.
/// - The choice between the kinds of correction is by fit to the neighbours, not the paper's
///   fixed order, and the ectopic correction keeps the pair's total rather than interpolating.
/// - The confirmation above, which the paper does not have; nor has it a whole run's ectopic
///   pairs found by shape (`EctopicPairs`).
///
/// Memory is bounded: a few ring buffers of at most 91 values, whatever the session's length
/// (and `explained`, kept only when asked for, one entry per RR changed).
public struct ArtefactCorrector: Sendable {
    /// Whether beats are corrected at all; when false every RR passes through as an NN interval at once,
    /// unchanged (an unmeasurable one included), and `artefacts` stays 0.
    public let correcting: Bool
    /// RR intervals changed or removed so far, counted as the type's documentation says.
    public private(set) var artefacts = 0
    /// Whether `explained` is kept (`hrm hrv --explain`); off for live windows, which need no list.
    public let explaining: Bool
    /// Each RR interval changed or removed so far, in the order decided, when `explaining`.
    public private(set) var explained: [Artefact] = []

    /// The paper's multiplier of the quartile deviation.
    static let thresholdMultiplier = 5.2
    /// The threshold window, in beats: the paper's length, but trailing (see the type's
    /// documentation).
    static let thresholdWindow = 91
    /// What a beat found abnormal adds to the threshold windows, as a fraction of the thresholds.
    static let abnormalShare = 0.5
    /// The live median window: `liveMedianBefore` RRs, the beat, and `liveLookahead` RRs.
    static let liveMedianBefore = 8
    static let liveLookahead = 2
    /// A whole series' median window: the paper's, 5 RRs either side.
    static let wholeMedianHalfWidth = 5
    /// Whether this corrects a whole run known in advance (`init(wholeRun:)`), not live.
    let wholeRun: Bool
    /// The median window of this corrector: `medianBefore` RRs, the beat, and `lookahead` RRs.
    let medianBefore: Int
    let lookahead: Int
    /// Whole series only: the indexes in the run of the RRs that start an ectopic pair
    /// (`EctopicPairs`), corrected whatever the paper's rule makes of them.
    private var ectopicStarts: [Int]
    /// The first of `ectopicStarts` not yet passed (beats are decided in order).
    private var nextEctopicStart = 0
    /// Beats a run needs before anything in it is decided.
    static let warmUpBeats = 20
    /// The floor of both thresholds, as a fraction of the local median.
    static let minimumThreshold = 0.05

    /// A received RR not decided yet.
    private struct Pending: Sendable {
        var milliseconds: Double
        /// Its position in the run's measurable RRs.
        var index: Int
        /// Its position among every RR given to the corrector.
        var input: Int
        /// The median of the RRs around it; nil until the RRs after it have arrived.
        var median: Double?
        /// Unmeasurable RRs removed just before it.
        var removedBefore: Int
    }

    private var pending: [Pending] = []
    /// The run's most recent measurable RRs, enough for a median window.
    private var recent: RingBuffer<Double>
    /// |dRR| and |mRR| of the run's recent RRs, for the thresholds.
    private var differenceScale = SlidingQuartiles(capacity: thresholdWindow)
    private var deviationScale = SlidingQuartiles(capacity: thresholdWindow)
    /// Measurable RRs received in this run.
    private var received = 0
    /// The run's RRs before this index are in the threshold windows.
    private var scaled = 0
    private var removedSinceLast = 0
    /// RRs given to the corrector, and NN intervals staged, over its lifetime (for `explained`).
    private var inputs = 0
    private var stagedCount = 0
    /// The run's latest NN interval, held back one beat; the one before it; whether the held one
    /// was corrected.
    private var staged: NNInterval?
    private var beforeStaged: Double?
    private var stagedCorrected = false
    /// The RR the held-back NN interval is, when it is one RR unchanged (for `explained`).
    private var stagedInput: Int?
    /// Pass-through mode: whether the next beat starts a run.
    private var runStarts = true
    /// Whether the next beat to decide is the paper's second candidate (see `BeatNeighbourhood`).
    private var secondCandidate = false

    /// A corrector at the start of a run; `correcting: false` passes RRs through (`--no-correction`);
    /// `explaining` keeps the list of what was changed (`explained`).
    public init(correcting: Bool = true, explaining: Bool = false) {
        self.init(
            correcting: correcting, explaining: explaining, wholeRun: false,
            medianBefore: Self.liveMedianBefore,
            lookahead: Self.liveLookahead, ectopicStarts: [])
    }

    /// The corrector of a whole run known in advance (`HRV.correct`): the paper's centred median
    /// window, and the ectopic pairs `EctopicPairs` finds in `run` (its RRs as they will be
    /// appended, one run, nothing appended after its `endRun`).
    init(wholeRun run: [Double], correcting: Bool = true, explaining: Bool = false) {
        let measurable = correcting ? run.filter { $0.isFinite && $0 > 0 } : []
        self.init(
            correcting: correcting, explaining: explaining, wholeRun: true,
            medianBefore: Self.wholeMedianHalfWidth,
            lookahead: Self.wholeMedianHalfWidth, ectopicStarts: EctopicPairs.starts(in: measurable))
    }

    private init(
        correcting: Bool, explaining: Bool, wholeRun: Bool, medianBefore: Int, lookahead: Int,
        ectopicStarts: [Int]
    ) {
        self.correcting = correcting
        self.explaining = explaining
        self.wholeRun = wholeRun
        self.medianBefore = medianBefore
        self.lookahead = lookahead
        self.ectopicStarts = ectopicStarts
        recent = RingBuffer(capacity: medianBefore + 1 + lookahead)
        pending.reserveCapacity(Self.warmUpBeats + lookahead + 2)
    }

    /// Takes the next RR interval (milliseconds); returns the NN intervals it lets the corrector
    /// decide, oldest first (possibly none).
    public mutating func append(_ rrMilliseconds: Double) -> [NNInterval] {
        var decided: [NNInterval] = []
        append(rrMilliseconds, into: &decided)
        return decided
    }

    /// `append(_:)` without allocating: appends the NN intervals decided to `decided`, which the
    /// caller can reuse (`removeAll(keepingCapacity: true)`) from beat to beat.
    public mutating func append(_ rrMilliseconds: Double, into decided: inout [NNInterval]) {
        guard correcting else {
            decided.append(NNInterval(milliseconds: rrMilliseconds, differenceUsable: !runStarts))
            runStarts = false
            return
        }
        let input = inputs
        inputs += 1
        guard rrMilliseconds.isFinite, rrMilliseconds > 0 else {
            removedSinceLast += 1
            return
        }
        recent.append(rrMilliseconds)
        pending.append(
            Pending(
                milliseconds: rrMilliseconds, index: received, input: input, median: nil,
                removedBefore: removedSinceLast))
        removedSinceLast = 0
        received += 1
        // The beat `lookahead` back now has its whole median window.
        let complete = received - 1 - lookahead
        if complete >= 0 { setMedian(ofIndex: complete) }
        decideReady(final: false, into: &decided)
    }

    /// The beats held back, as they would be decided if the run ended now. Changes nothing.
    public var provisional: [NNInterval] {
        var copy = self
        return copy.endRun()
    }

    /// The run ends here (the end of the input, or a gap such as a dropped link): decides the
    /// beats held back. The next beat starts a new run (no successive difference to it).
    public mutating func endRun() -> [NNInterval] {
        var decided: [NNInterval] = []
        endRun(into: &decided)
        return decided
    }

    /// `endRun()` appending to a buffer of the caller's.
    public mutating func endRun(into decided: inout [NNInterval]) {
        runStarts = true
        guard correcting else { return }
        // The last beats' medians, over the RRs there are.
        for index in max(received - lookahead, 0)..<received { setMedian(ofIndex: index) }
        decideReady(final: true, into: &decided)
        artefacts += removedSinceLast
        if explaining {
            for input in (inputs - removedSinceLast)..<inputs {
                explained.append(Artefact(index: input, beat: stagedCount, kind: .removed))
            }
        }
        pending.removeAll(keepingCapacity: true)
        recent.removeAll()
        differenceScale.removeAll()
        deviationScale.removeAll()
        received = 0
        scaled = 0
        removedSinceLast = 0
        if let staged { decided.append(staged) }
        staged = nil
        beforeStaged = nil
        stagedCorrected = false
        stagedInput = nil
        secondCandidate = false
        ectopicStarts = []
        nextEctopicStart = 0
    }

    /// The capacity of the corrector's storage, for the memory-bound tests.
    var storageCapacity: Int {
        pending.capacity + recent.storageCapacity + differenceScale.storageCapacity
            + deviationScale.storageCapacity
    }

    // MARK: - Medians and thresholds

    /// The median of the RRs from `medianBefore` before `index` to `lookahead` after it (those
    /// received), recorded on the pending beat and, as |mRR|, in the threshold window.
    private mutating func setMedian(ofIndex index: Int) {
        let firstHeld = received - recent.count
        let lower = max(index - medianBefore, firstHeld)
        let upper = min(index + lookahead, received - 1)
        let median = Self.median(of: recent, offsets: (lower - firstHeld)...(upper - firstHeld))
        let rr = recent[index - firstHeld]
        // Until the run decides beats, the windows fill with the RRs as received; from then on
        // with what the decisions make of them (`decide`).
        if received < Self.warmUpBeats, index == scaled, median > 0 {
            if index > firstHeld { differenceScale.insert(abs(rr - recent[index - firstHeld - 1]) / median) }
            deviationScale.insert(abs(Self.medianDeviation(rr, median)) / median)
            scaled += 1
        }
        if let first = pending.first, index >= first.index, index - first.index < pending.count {
            pending[index - first.index].median = median
        }
    }

    /// mRR: the deviation from the median, negative ones doubled (the paper's asymmetry: short
    /// beats are the likelier artefacts).
    private static func medianDeviation(_ rr: Double, _ median: Double) -> Double {
        let deviation = rr - median
        return deviation < 0 ? 2 * deviation : deviation
    }

    private static func median(of values: RingBuffer<Double>, offsets: ClosedRange<Int>) -> Double {
        withUnsafeTemporaryAllocation(of: Double.self, capacity: offsets.count) { buffer in
            // Insertion sort: at most 11 values.
            var count = 0
            for offset in offsets {
                let value = values[offset]
                var slot = count
                while slot > 0, buffer[slot - 1] > value {
                    buffer[slot] = buffer[slot - 1]
                    slot -= 1
                }
                buffer[slot] = value
                count += 1
            }
            return count % 2 == 1 ? buffer[count / 2] : (buffer[count / 2 - 1] + buffer[count / 2]) / 2
        }
    }

    /// The windows hold values relative to their beat's median: the threshold in milliseconds
    /// is for `median`.
    private func threshold(_ scale: SlidingQuartiles, median: Double) -> Double {
        max(Self.thresholdMultiplier * scale.quartileDeviation, Self.minimumThreshold) * median
    }

    // MARK: - Decisions

    /// Decides every pending beat that can be decided: those with a median, once the run is past
    /// its warm-up; at the end of a run, all of them.
    private mutating func decideReady(final: Bool, into decided: inout [NNInterval]) {
        let warm = received >= Self.warmUpBeats
        if final, !warm {
            for beat in pending {
                stage(
                    beat, beat.milliseconds, artefacts: beat.removedBefore, corrected: false, into: &decided)
            }
            pending.removeAll(keepingCapacity: true)
            return
        }
        guard warm else { return }
        var consumed = 0
        while consumed < pending.count, pending[consumed].median != nil {
            consumed += decide(at: consumed, into: &decided)
        }
        pending.removeFirst(min(consumed, pending.count))
    }

    /// Decides the pending beat at `position`; returns how many pending beats that used up.
    private mutating func decide(at position: Int, into decided: inout [NNInterval]) -> Int {
        let beat = pending[position]
        let next = position + 1 < pending.count ? pending[position + 1] : nil
        let afterNext = position + 2 < pending.count ? pending[position + 2] : nil
        let rr = beat.milliseconds
        let median = beat.median ?? rr
        let th1 = threshold(differenceScale, median: median)
        let th2 = threshold(deviationScale, median: median)
        let previous = staged?.milliseconds
        let neighbourhood = BeatNeighbourhood(
            difference: previous.map { (rr - $0) / th1 } ?? 0,
            differenceBefore: previous.flatMap { last in beforeStaged.map { (last - $0) / th1 } },
            differenceAfter: next.map { ($0.milliseconds - rr) / th1 },
            differenceAfterNext: afterNext.flatMap { after in
                next.map { (after.milliseconds - $0.milliseconds) / th1 }
            },
            medianDeviation: Self.medianDeviation(rr, median) / th2,
            aboveMedian: rr > median, secondCandidate: secondCandidate)
        let paperVerdict = neighbourhood.verdict
        secondCandidate = neighbourhood.nominatesNext && paperVerdict != .ectopic
        // An ectopic pair found by its shape is corrected whatever the rule says (whole runs only),
        // unless the beat before was corrected: the shape was then read against an artefact.
        while nextEctopicStart < ectopicStarts.count, ectopicStarts[nextEctopicStart] < beat.index {
            nextEctopicStart += 1
        }
        let pairStarts =
            next != nil && !stagedCorrected && nextEctopicStart < ectopicStarts.count
            && ectopicStarts[nextEctopicStart] == beat.index
        let verdict = pairStarts ? .ectopic : neighbourhood.confirmed(paperVerdict)
        if beat.index >= scaled, median > 0 {
            // A normal beat adds its differences; an abnormal one at most a share of the
            // thresholds, so that artefacts cannot inflate them but a lasting change of rhythm
            // still raises them.
            let cap = verdict == .normal ? Double.infinity : Self.abnormalShare
            if let previous { differenceScale.insert(min(abs(rr - previous), cap * th1) / median) }
            deviationScale.insert(min(abs(Self.medianDeviation(rr, median)), cap * th2) / median)
            scaled = beat.index + 1
        }
        guard verdict != .normal else {
            stage(beat, rr, artefacts: beat.removedBefore, corrected: false, into: &decided)
            return 1
        }
        let correction =
            pairStarts
            ? .pairWithNext(mean: (rr + (next?.milliseconds ?? rr)) / 2)
            : BeatCorrection.correction(
                of: Neighbours(
                    beforePrevious: beforeStaged, previous: stagedCorrected ? nil : previous, rr: rr,
                    next: next?.milliseconds, afterNext: afterNext?.milliseconds),
                verdict: verdict, median: median, tolerance: th2, medianFits: wholeRun)
        switch correction {
        case .extra(let merged):
            secondCandidate = false
            let removedBetween = next?.removedBefore ?? 0
            stage(
                beat, merged, artefacts: 2 + beat.removedBefore + removedBetween, corrected: true,
                kind: .extra,
                into: &decided)
            if explaining, let next {
                note(removedBefore: removedBetween, input: next.input, beat: stagedCount - 1)
                explained.append(Artefact(index: next.input, beat: stagedCount - 1, kind: .extra))
            }
            return 2
        case .missed(let half):
            stage(
                beat, half, artefacts: 1 + beat.removedBefore, corrected: true, kind: .missed, into: &decided)
            stage(nil, half, artefacts: 1, corrected: true, into: &decided)
            return 1
        case .pairWithNext(let mean):
            secondCandidate = false
            stage(
                beat, mean, artefacts: 1 + beat.removedBefore, corrected: true, kind: .ectopic, into: &decided
            )
            if let next {
                stage(
                    next, mean, artefacts: 1 + next.removedBefore, corrected: true, kind: .ectopic,
                    into: &decided)
            }
            return 2
        case .pairWithPrevious(let mean):
            reviseStaged(to: mean)
            stage(
                beat, mean, artefacts: 1 + beat.removedBefore, corrected: true, kind: .ectopic, into: &decided
            )
            return 1
        case .interpolated(let value):
            stage(
                beat, value, artefacts: 1 + beat.removedBefore, corrected: true,
                kind: rr > median ? .long : .short,
                into: &decided)
            return 1
        }
    }

    /// Makes `milliseconds` the latest NN interval of the run, held back one beat (a following
    /// ectopic beat may still pair with it), and passes on the one it replaces. `source` is the
    /// RR it is made of (nil for the second half of a missed beat), `kind` what that RR was taken
    /// for when it was changed: both only for `explained`.
    private mutating func stage(
        _ source: Pending?, _ milliseconds: Double, artefacts: Int, corrected: Bool,
        kind: ArtefactKind? = nil,
        into decided: inout [NNInterval]
    ) {
        let usable = staged != nil && artefacts == 0 && !stagedCorrected
        if let staged { decided.append(staged) }
        beforeStaged = staged?.milliseconds
        staged = NNInterval(milliseconds: milliseconds, artefacts: artefacts, differenceUsable: usable)
        stagedCorrected = corrected
        stagedInput = corrected ? nil : source?.input
        self.artefacts += artefacts
        if explaining, let source {
            note(removedBefore: source.removedBefore, input: source.input, beat: stagedCount)
            if let kind { explained.append(Artefact(index: source.input, beat: stagedCount, kind: kind)) }
        }
        stagedCount += 1
    }

    /// Explains the unmeasurable RRs removed just before RR `input`, counted on NN interval `beat`.
    private mutating func note(removedBefore: Int, input: Int, beat: Int) {
        for offset in stride(from: removedBefore, to: 0, by: -1) {
            explained.append(Artefact(index: input - offset, beat: beat, kind: .removed))
        }
    }

    /// The held-back NN interval turns out to be the first of a compensated pair.
    private mutating func reviseStaged(to milliseconds: Double) {
        guard var revised = staged else { return }
        revised.milliseconds = milliseconds
        revised.artefacts += 1
        revised.differenceUsable = false
        staged = revised
        stagedCorrected = true
        artefacts += 1
        if explaining, let input = stagedInput {
            explained.append(Artefact(index: input, beat: stagedCount - 1, kind: .ectopic))
        }
    }
}
