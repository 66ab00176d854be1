import Monitor

/// The live line's ECG: the last seconds of the trace drawn in block characters (an R peak is a
/// spike) and the heart rate from the R peaks hrm found, beside the strap's own.
struct ECGTrace {
    /// How much of the trace is drawn, in samples (2.5 s at 130 Hz).
    static let span = 325
    /// Characters of trace.
    static let width = 25
    private static let levels: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    private var samples: [Int32] = []
    private var intervals: [Double] = []

    /// Takes a frame's samples (after a loss the trace starts again).
    mutating func add(_ frame: ECGFrame) {
        if frame.missingSamples > 0 { samples.removeAll() }
        samples.append(contentsOf: frame.microvolts)
        if samples.count > Self.span { samples.removeFirst(samples.count - Self.span) }
    }

    /// Takes an R peak: its RR feeds the ECG's heart rate (a first peak starts it again).
    mutating func add(_ beat: ECGBeat) {
        guard let rr = beat.rrMilliseconds else { return intervals.removeAll() }
        intervals.append(rr)
        if intervals.count > 5 { intervals.removeFirst() }
    }

    /// The heart rate over the last five RR intervals of the ECG, nil before there are two.
    var heartRate: Int? {
        guard intervals.count >= 2 else { return nil }
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        guard mean > 0 else { return nil }
        return Int((60_000 / mean).rounded())
    }

    /// `ECG 72 bpm ▁▁▂█▁▁▁▁▁▂█▁▁`, or nil before any sample came.
    var text: String? {
        guard !samples.isEmpty else { return nil }
        let rate = heartRate.map { "ECG \($0) bpm" } ?? "ECG"
        return rate + " " + trace
    }

    /// Each character is the highest point of its stretch of samples above the lowest, on the
    /// scale of the whole span: R peaks reach the top, the rest stays near the bottom.
    var trace: String {
        let perCharacter = max(1, Self.span / Self.width)
        var peaks: [Int32] = []
        var index = samples.count
        while index > 0, peaks.count < Self.width {
            let start = max(0, index - perCharacter)
            peaks.append(samples[start..<index].max() ?? 0)
            index = start
        }
        peaks.reverse()
        let low = samples.min() ?? 0
        let high = samples.max() ?? 0
        let range = Double(high) - Double(low)
        return String(
            peaks.map { value in
                guard range > 0 else { return Self.levels[0] }
                let level = Int(
                    ((Double(value) - Double(low)) / range * Double(Self.levels.count - 1)).rounded())
                return Self.levels[min(max(level, 0), Self.levels.count - 1)]
            })
    }
}
