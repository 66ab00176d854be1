/// The sums every time-domain metric is computed from, updated one beat at a time in either
/// direction: `HRV.metrics(of:)` adds every beat once, `HRVWindow` adds at the back and removes at
/// the front. One implementation of the Task Force formulas for both.
///
/// Values are summed relative to a fixed `reference` (the first beat added), so that the sum of
/// squares for SDNN does not lose precision to cancellation: SDNN² = (Σd² − (Σd)²/N) / (N − 1)
/// with d = NN − reference, which stays accurate while the reference is near the mean. The
/// window re-bases (recomputes the sums from its beats) from time to time, which also bounds the
/// rounding drift of the removals.
struct RunningSums: Sendable, Equatable {
    private(set) var reference = 0.0
    private(set) var count = 0
    /// Σ (NN − reference).
    private var offsetSum = 0.0
    /// Σ (NN − reference)².
    private var offsetSquares = 0.0
    /// Successive differences counted (the later beat's `differenceUsable`, both in the run).
    private var differences = 0
    private var differenceSquares = 0.0
    private var differencesAbove50 = 0
    private var artefacts = 0

    /// The sum of the NN intervals, in milliseconds.
    var milliseconds: Double { Double(count) * reference + offsetSum }

    /// Adds `beat`, which follows `previous` (nil when it is the first of the beats summed).
    mutating func add(_ beat: NNInterval, after previous: NNInterval?) {
        if count == 0 { reference = beat.milliseconds }
        count += 1
        let offset = beat.milliseconds - reference
        offsetSum += offset
        offsetSquares += offset * offset
        artefacts += beat.artefacts
        if let previous, beat.differenceUsable {
            addDifference(beat.milliseconds - previous.milliseconds, sign: 1)
        }
    }

    /// Removes `beat`, the first of the beats summed; `next` is the beat after it (nil if none).
    mutating func removeFirst(_ beat: NNInterval, before next: NNInterval?) {
        count -= 1
        guard count > 0 else {
            self = RunningSums()
            return
        }
        let offset = beat.milliseconds - reference
        offsetSum -= offset
        offsetSquares -= offset * offset
        artefacts -= beat.artefacts
        if let next, next.differenceUsable { addDifference(next.milliseconds - beat.milliseconds, sign: -1) }
    }

    private mutating func addDifference(_ difference: Double, sign: Int) {
        differences += sign
        differenceSquares += Double(sign) * difference * difference
        if abs(difference) > 50 { differencesAbove50 += sign }
    }

    /// The sums of `beats` from scratch.
    init(_ beats: some Sequence<NNInterval>) {
        var previous: NNInterval? = nil
        for beat in beats {
            add(beat, after: previous)
            previous = beat
        }
    }

    init() {}

    /// Every metric but alpha1.
    var metrics: HRVMetrics {
        var metrics = HRVMetrics(beats: count, artefacts: artefacts, seconds: milliseconds / 1000)
        guard count > 0 else { return metrics }
        let n = Double(count)
        let meanNN = reference + offsetSum / n
        metrics.meanNN = meanNN
        metrics.meanHR = 60_000 / meanNN
        if count > 1 {
            let squaredDeviations = max(offsetSquares - offsetSum * offsetSum / n, 0)
            metrics.sdnn = (squaredDeviations / (n - 1)).squareRoot()
        }
        if differences > 0 {
            metrics.rmssd = (max(differenceSquares, 0) / Double(differences)).squareRoot()
            metrics.pnn50 = 100 * Double(differencesAbove50) / Double(differences)
        }
        return metrics
    }
}
