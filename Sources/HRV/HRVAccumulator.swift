/// Every metric over all the beats ever appended, in O(1) memory and O(1) per beat (alpha1
/// included, by `StreamingDFA`): a whole session's figures, however long it runs. A window of
/// recent beats is `HRVWindow`.
public struct HRVAccumulator: Sendable {
    private var sums = RunningSums()
    private var dfa = StreamingDFA()
    private var last: NNInterval? = nil

    /// An accumulator with no beats.
    public init() {}

    /// The NN intervals appended (beats that cannot be measured are ignored, as everywhere).
    public var count: Int { sums.count }

    /// Adds one beat (O(1)); a beat that cannot be measured is ignored.
    public mutating func append(_ beat: NNInterval) {
        guard beat.isMeasurable else { return }
        sums.add(beat, after: last)
        dfa.append(beat.milliseconds)
        last = beat
    }

    /// Adds the beats in order.
    public mutating func append(contentsOf beats: some Sequence<NNInterval>) {
        for beat in beats { append(beat) }
    }

    /// The metrics over every beat, with `provisional` beats added as if appended (not kept).
    public func metrics(adding provisional: [NNInterval] = []) -> HRVMetrics {
        var all = self
        all.append(contentsOf: provisional)
        var metrics = all.sums.metrics
        metrics.alpha1 = all.dfa.alpha1
        return metrics
    }
}
