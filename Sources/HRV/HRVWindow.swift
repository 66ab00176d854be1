/// The most recent NN intervals whose sum is at most `seconds` (all of them when nil), with
/// running sums so that adding a beat costs O(1) amortised.
public struct HRVWindow: Sendable {
    public let seconds: Double?
    private var beats: [NNInterval] = []

    public init(seconds: Double?) {
        self.seconds = seconds
    }

    public var count: Int { beats.count }

    public mutating func append(_ beat: NNInterval) {
        // SKELETON: no running sums yet.
        beats.append(beat)
        guard let seconds else { return }
        while beats.reduce(0, { $0 + $1.milliseconds }) > seconds * 1000, !beats.isEmpty { beats.removeFirst() }
    }

    public mutating func append(contentsOf beats: some Sequence<NNInterval>) {
        for beat in beats { append(beat) }
    }

    /// The metrics over the window, with `provisional` beats added as if appended (not kept);
    /// alpha1 (O(n)) only when asked.
    public func metrics(adding provisional: [NNInterval] = [], alpha1: Bool = true) -> HRVMetrics {
        var copy = self
        copy.append(contentsOf: provisional)
        return HRV.metrics(of: copy.beats, alpha1: alpha1)
    }
}
