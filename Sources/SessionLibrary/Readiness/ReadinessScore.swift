import HRV

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Scores a morning reading from its RR intervals: artefact correction as `hrm hrv` does it
/// (each run, cut where the link dropped, corrected whole), then ln(RMSSD) and the mean heart
/// rate. A reading the corrector had to change too much, or that is too short, is refused: a
/// figure made mostly of corrections (a strap losing contact, a restless sleeper getting up) says
/// more about the correction than about the person.
package enum ReadinessScore {
    /// A reading with more than this share of its RR intervals corrected is refused (5 %, the
    /// limit Kubios and the HRV apps' guidance give for short readings).
    package static let maximumCorrectedShare = 0.05
    /// A reading needs this many beats at least.
    package static let minimumBeats = 40
    /// ... and beats covering this share of the time asked for.
    package static let minimumCoverage = 0.9

    /// Why a reading was not scored.
    package enum Refusal: String, Sendable {
        /// More than 5 % of the beats corrected.
        case artefacts
        /// Fewer than `minimumBeats` beats, or less than 90 % of the time asked for.
        case tooFewBeats = "too_few_beats"
        /// No beat-to-beat difference at all: RMSSD 0, whose log is not a number.
        case noVariability = "no_variability"
    }

    /// What became of a reading.
    package enum Outcome: Equatable, Sendable {
        case scored(ReadinessFigures)
        /// Refused, with the beats received, how many were corrected and the seconds they cover.
        case refused(Refusal, beats: Int, corrected: Int, seconds: Double)

        /// Why it was refused; nil when scored.
        package var refusal: Refusal? {
            if case .refused(let refusal, _, _, _) = self { return refusal }
            return nil
        }

        /// RR intervals received.
        package var beats: Int {
            switch self {
            case .scored(let figures): figures.beats
            case .refused(_, let beats, _, _): beats
            }
        }

        /// RR intervals the corrector changed or removed.
        package var correctedBeats: Int {
            switch self {
            case .scored(let figures): figures.correctedBeats
            case .refused(_, _, let corrected, _): corrected
            }
        }

        /// The beats' time, seconds.
        package var seconds: Double {
            switch self {
            case .scored(let figures): figures.seconds
            case .refused(_, _, _, let seconds): seconds
            }
        }
    }

    /// The outcome of `runs` (RR intervals in milliseconds, a run per connected stretch) for a
    /// reading of `wanted` seconds.
    package static func score(runs: [[Double]], wanted: Double) -> Outcome {
        let beats = runs.reduce(0) { $0 + $1.count }
        let seconds = runs.reduce(0.0) { $0 + $1.reduce(0, +) } / 1000
        var nn: [NNInterval] = []
        for run in runs where !run.isEmpty { nn += HRV.correct(rr: run) }
        let metrics = HRV.metrics(of: nn, alpha1: false)
        let corrected = metrics.artefacts
        guard beats >= minimumBeats, seconds >= wanted * minimumCoverage else {
            return .refused(.tooFewBeats, beats: beats, corrected: corrected, seconds: seconds)
        }
        guard Double(corrected) <= Double(beats) * maximumCorrectedShare else {
            return .refused(.artefacts, beats: beats, corrected: corrected, seconds: seconds)
        }
        guard let rmssd = metrics.rmssd, rmssd > 0, let meanHR = metrics.meanHR, meanHR.isFinite else {
            return .refused(.noVariability, beats: beats, corrected: corrected, seconds: seconds)
        }
        return .scored(
            ReadinessFigures(
                lnRMSSD: log(rmssd), rmssd: rmssd, restingHR: meanHR, beats: beats, correctedBeats: corrected,
                seconds: seconds))
    }
}
