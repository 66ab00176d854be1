/// HRV over whole series: what `hrm hrv` and tests use. Live windows use `HRVWindow`.
public enum HRV {
    /// Artefact correction (unless `correcting` is false), then every metric over the result.
    public static func analyse(rr milliseconds: [Double], correcting: Bool = true) -> HRVMetrics {
        var corrector = ArtefactCorrector(correcting: correcting)
        var beats: [NNInterval] = []
        for rr in milliseconds { beats += corrector.append(rr) }
        beats += corrector.endRun()
        return metrics(of: beats)
    }

    /// Every metric over `beats`; alpha1 only when asked (it costs O(n), the rest is in the sums).
    public static func metrics(of beats: some Collection<NNInterval>, alpha1 wanted: Bool = true) -> HRVMetrics {
        // SKELETON: naive sums; the HRV helper replaces this with the shared running sums.
        var metrics = HRVMetrics(beats: beats.count)
        guard !beats.isEmpty else { return metrics }
        let values = beats.map(\.milliseconds)
        let sum = values.reduce(0, +)
        let mean = sum / Double(values.count)
        metrics.artefacts = beats.reduce(0) { $0 + $1.artefacts }
        metrics.seconds = sum / 1000
        metrics.meanNN = mean
        metrics.meanHR = 60_000 / mean
        if values.count > 1 {
            metrics.sdnn = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1))
                .squareRoot()
        }
        var squares = 0.0
        var above50 = 0
        var differences = 0
        var previous: NNInterval? = nil
        for beat in beats {
            defer { previous = beat }
            guard let previous, beat.differenceUsable else { continue }
            let d = beat.milliseconds - previous.milliseconds
            squares += d * d
            if abs(d) > 50 { above50 += 1 }
            differences += 1
        }
        if differences > 0 {
            metrics.rmssd = (squares / Double(differences)).squareRoot()
            metrics.pnn50 = 100 * Double(above50) / Double(differences)
        }
        if wanted { metrics.alpha1 = alpha1(values) }
        return metrics
    }

    /// DFA alpha1 of `nn` (milliseconds): box sizes 4 to 16, non-overlapping boxes from the start;
    /// nil below 50 intervals.
    public static func alpha1(_ nn: [Double]) -> Double? {
        nil  // SKELETON
    }
}
