import HRV
import Monitor
import Outputs
import SessionLibrary

/// What `hrm hrv` prints for one series of runs (the whole input, or one strap's lines): the
/// figures over all of it or per `--window`.
struct HRVReport {
    /// RR intervals read, before correction.
    let intervals: Int
    /// Seconds of beats after correction.
    let covered: Double
    let spans: [HRVSpan]

    /// Why a series gives nothing to print.
    enum Shortfall: Error, Equatable {
        case noIntervals
        case noBeats
        case shorterThanWindow(covered: Double, window: Double)

        /// The message about the whole input (`strap` nil), or about one strap's lines.
        func message(strap: String? = nil) -> String {
            switch self {
            case .noIntervals: strap.map { "\($0): no RR intervals" } ?? "no RR intervals in input"
            case .noBeats: (strap.map { "\($0): " } ?? "") + "no beats left after artefact correction"
            case .shorterThanWindow(let covered, let window):
                "\(strap ?? "the input") covers \(HRVText.time(covered)) of beats, less than one --window of \(HRVText.time(window))"
            }
        }
    }

    /// Each run corrected on its own, as the corrector's `endRun` would (ArtefactCorrectorTests);
    /// `window` nil: one span over every beat. `explaining`: each span lists the RR intervals
    /// changed among its beats, numbered from 0 over all the runs.
    static func analyse(
        _ runs: [[Double]], correcting: Bool, window: Double?, step: Double?, explaining: Bool = false
    ) throws(Shortfall) -> HRVReport {
        let intervals = runs.reduce(0) { $0 + $1.count }
        guard intervals > 0 else { throw .noIntervals }
        var beats: [NNInterval] = []
        var artefacts: [Artefact] = []
        var read = 0
        for run in runs {
            if explaining, correcting {
                let (corrected, changed) = HRV.correctExplained(rr: run)
                artefacts += changed.map {
                    Artefact(index: $0.index + read, beat: $0.beat + beats.count, kind: $0.kind)
                }
                beats += corrected
            } else {
                beats += HRV.correct(rr: run, correcting: correcting)
            }
            read += run.count
        }
        guard !beats.isEmpty else { throw .noBeats }
        let covered = beats.reduce(0) { $0 + $1.milliseconds } / 1000
        let explained = explaining ? artefacts : nil
        guard let window else {
            return HRVReport(
                intervals: intervals, covered: covered, spans: [HRVWindows.whole(beats, explained: explained)]
            )
        }
        let spans = HRVWindows.windows(beats, window: window, step: step ?? window, explained: explained)
        guard !spans.isEmpty else { throw .shorterThanWindow(covered: covered, window: window) }
        return HRVReport(intervals: intervals, covered: covered, spans: spans)
    }
}
