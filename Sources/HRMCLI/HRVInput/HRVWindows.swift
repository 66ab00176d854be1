import HRV
import Monitor
import Outputs
import SessionLibrary

/// The metrics over one stretch of beats: the whole input, or one `--window`.
struct HRVSpan: Equatable {
    /// Beat time in seconds from the first beat (its start): NN intervals whose end lies in
    /// (start, end] are in the span.
    let start: Double
    let end: Double
    let metrics: HRVMetrics
    /// The RR intervals changed among the span's beats, when asked for (`--explain`).
    var explained: [Artefact]? = nil
}

/// `hrm hrv`'s windows over beat time: the cumulative NN time from the first beat, in seconds.
/// A gap (a dropped link, the next file) adds no time: the recordings are joined end to end.
enum HRVWindows {
    /// Slack for the sums of NN intervals, in milliseconds: a window that ends at 60 s takes the
    /// beat that ends at 59999.99999999 ms by the sum of doubles.
    static let slack = 1e-6

    /// One span over every beat, with `explained` as it is.
    static func whole(_ beats: [NNInterval], explained: [Artefact]? = nil) -> HRVSpan {
        let metrics = HRV.metrics(of: beats)
        return HRVSpan(
            start: 0, end: beats.reduce(0) { $0 + $1.milliseconds } / 1000, metrics: metrics,
            explained: explained)
    }

    /// Windows of `window` seconds starting every `step` seconds from 0, complete ones only: a
    /// window that would end after the last beat is not computed (its figures would cover less
    /// time than the others'). Empty when the beats cover less than one window. Each span takes
    /// the artefacts of `explained` that went into its beats.
    static func windows(_ beats: [NNInterval], window: Double, step: Double, explained: [Artefact]? = nil)
        -> [HRVSpan]
    {
        var ends: [Double] = []
        ends.reserveCapacity(beats.count)
        var total = 0.0
        for beat in beats {
            total += beat.milliseconds
            ends.append(total)
        }
        var spans: [HRVSpan] = []
        var first = 0
        var index = 0
        while true {
            let start = Double(index) * step
            let end = start + window
            guard end * 1000 <= total + slack else { break }
            // Beats ending at or before the start belong to earlier windows only.
            while first < ends.count, ends[first] <= start * 1000 + slack { first += 1 }
            var last = first
            while last < ends.count, ends[last] <= end * 1000 + slack { last += 1 }
            spans.append(
                HRVSpan(
                    start: start, end: end, metrics: HRV.metrics(of: beats[first..<last]),
                    explained: explained?.filter { (first..<last).contains($0.beat) }))
            index += 1
        }
        return spans
    }
}

/// How `hrm hrv` writes numbers and times.
enum HRVText {
    /// `812`, `812.5`: integral values without a point.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return String(value) }
        if value == value.rounded(), value.magnitude < 1e15 { return String(Int(value)) }
        return String(value)
    }

    /// Beat time for people: `0:00`, `1:30`, `1:02:03`, with the fraction when there is one
    /// (`0:02.5`, to the millisecond).
    static func time(_ seconds: Double) -> String {
        let milliseconds = Int((seconds * 1000).rounded())
        let whole = milliseconds / 1000
        let fraction = milliseconds % 1000
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text = hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
        if fraction != 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text
    }
}
