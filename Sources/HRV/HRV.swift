/// HRV over whole series: what `hrm hrv` and tests use. Live windows use `HRVWindow`.
public enum HRV {
    /// Artefact correction (unless `correcting` is false), then every metric over the result.
    public static func analyse(rr milliseconds: [Double], correcting: Bool = true) -> HRVMetrics {
        metrics(of: correct(rr: milliseconds, correcting: correcting))
    }

    /// The NN intervals `ArtefactCorrector` makes of `milliseconds` as one run: what `analyse`
    /// computes its metrics from.
    public static func correct(rr milliseconds: [Double], correcting: Bool = true) -> [NNInterval] {
        var corrector = ArtefactCorrector(correcting: correcting)
        var beats: [NNInterval] = []
        beats.reserveCapacity(milliseconds.count + 8)
        for rr in milliseconds { corrector.append(rr, into: &beats) }
        corrector.endRun(into: &beats)
        return beats
    }

    /// `correct(rr:)` with what was changed: each RR interval corrected or removed, numbered
    /// from 0 in `milliseconds` (its `beat` the NN interval's place in `beats`).
    public static func correctExplained(rr milliseconds: [Double]) -> (
        beats: [NNInterval], artefacts: [Artefact]
    ) {
        var corrector = ArtefactCorrector(explaining: true)
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
