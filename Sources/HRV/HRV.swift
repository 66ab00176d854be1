/// HRV over whole series: what `hrm hrv` and tests use. Live windows use `HRVWindow`.
public enum HRV {
    /// Artefact correction of the whole run (unless `correcting` is false; see `correct`), then
    /// every metric over the result.
    public static func analyse(rr milliseconds: [Double], correcting: Bool = true) -> HRVMetrics {
        metrics(of: correct(rr: milliseconds, correcting: correcting))
    }

    /// The NN intervals `ArtefactCorrector` makes of `milliseconds` as one whole run: what
    /// `analyse` computes its metrics from. The whole run is known, so the corrector takes the
    /// paper's centred median and finds ectopic pairs by their shape (`EctopicPairs`), where the
    /// live corrector cannot wait for the beats that needs; `correctLive` is the live one's.
    public static func correct(rr milliseconds: [Double], correcting: Bool = true) -> [NNInterval] {
        run(ArtefactCorrector(wholeRun: milliseconds, correcting: correcting), over: milliseconds).beats
    }

    /// What the live corrector (`hrm watch`, `hrm record`) makes of `milliseconds` as one run: the
    /// same NN intervals as fed one RR at a time, then `endRun`.
    public static func correctLive(rr milliseconds: [Double], correcting: Bool = true) -> [NNInterval] {
        run(ArtefactCorrector(correcting: correcting), over: milliseconds).beats
    }

    /// `correct(rr:)` with what was changed: each RR interval corrected or removed, numbered
    /// from 0 in `milliseconds` (its `beat` the NN interval's place in `beats`).
    public static func correctExplained(rr milliseconds: [Double]) -> (
        beats: [NNInterval], artefacts: [Artefact]
    ) {
        run(ArtefactCorrector(wholeRun: milliseconds, explaining: true), over: milliseconds)
    }

    private static func run(_ start: ArtefactCorrector, over milliseconds: [Double]) -> (
        beats: [NNInterval], artefacts: [Artefact]
    ) {
        var corrector = start
        var beats: [NNInterval] = []
        beats.reserveCapacity(milliseconds.count + 8)
        for rr in milliseconds { corrector.append(rr, into: &beats) }
        corrector.endRun(into: &beats)
        return (beats, corrector.explained)
    }

    /// Every metric over `beats`; alpha1 only when asked (it costs O(n), the rest is in the sums).
    /// Beats that cannot be measured (not finite, or not positive) are skipped, as `HRVWindow`
    /// skips them.
    public static func metrics(of beats: some Collection<NNInterval>, alpha1 wanted: Bool = true)
        -> HRVMetrics
    {
        let measurable = beats.lazy.filter(\.isMeasurable)
        var metrics = RunningSums(measurable).metrics
        if wanted { metrics.alpha1 = DetrendedFluctuation.alpha1(Array(measurable.map(\.milliseconds))) }
        return metrics
    }

    /// DFA alpha1 of `nn` (milliseconds): box sizes 4 to 16, non-overlapping boxes from the start;
    /// nil below 50 intervals, or for a constant series (see `DetrendedFluctuation`).
    public static func alpha1(_ nn: [Double]) -> Double? {
        DetrendedFluctuation.alpha1(nn)
    }
}
