/// The most recent NN intervals whose sum is at most `seconds` (all of them when nil), with
/// running sums so that adding a beat costs O(1) amortised.
///
/// The window is the longest run of the most recent beats that fits: each append evicts beats
/// from the front until the sum is within `seconds` again (a single beat longer than the window
/// leaves it empty). Beats that cannot be measured (not finite, or not positive) are ignored.
///
/// The sums (see `RunningSums`) are taken relative to a reference beat and updated by addition
/// and subtraction; once as many beats have been evicted as the window holds (at least 256), they
/// are recomputed from the stored beats with a fresh reference, which costs O(1) amortised and
/// keeps both the rounding drift and the cancellation in SDNN negligible over any session.
public struct HRVWindow: Sendable {
    /// The window's length in seconds (the most its beats may sum to); nil keeps every beat.
    public let seconds: Double?
    private var queue = BeatQueue()
    private var sums = RunningSums()
    private var evictionsSinceRebase = 0

    /// An empty window of `seconds` (nil: unbounded).
    public init(seconds: Double?) {
        self.seconds = seconds
    }

    /// The NN intervals in the window.
    public var count: Int { queue.count }

    /// Adds one beat and evicts the oldest until the window's beats sum to at most `seconds`; a beat
    /// that cannot be measured is ignored.
    public mutating func append(_ beat: NNInterval) {
        guard beat.isMeasurable else { return }
        sums.add(beat, after: queue.last)
        queue.append(beat)
        guard let limit else { return }
        while sums.milliseconds > limit, let first = queue.first {
            sums.removeFirst(first, before: queue.count > 1 ? queue[1] : nil)
            queue.removeFirst()
            evictionsSinceRebase += 1
        }
        if evictionsSinceRebase >= max(queue.count, 256) {
            sums = RunningSums(queue.beats)
            evictionsSinceRebase = 0
        }
    }

    /// Adds the beats in order.
    public mutating func append(contentsOf beats: some Sequence<NNInterval>) {
        for beat in beats { append(beat) }
    }

    /// Empties the window (a new session); keeps its storage.
    public mutating func removeAll() {
        queue.removeAll()
        sums = RunningSums()
        evictionsSinceRebase = 0
    }

    /// The metrics over the window, with `provisional` beats added as if appended (not kept);
    /// alpha1 (O(n)) only when asked. Costs O(provisional) without alpha1.
    public func metrics(adding provisional: [NNInterval] = [], alpha1: Bool = true) -> HRVMetrics {
        let extra = provisional.allSatisfy(\.isMeasurable) ? provisional : provisional.filter(\.isMeasurable)
        var sums = self.sums
        // The window is the stored beats from `start`, then `extra`: indices run over both.
        var start = 0
        for (offset, candidate) in extra.enumerated() {
            let end = queue.count + offset
            sums.add(candidate, after: end > start ? beat(at: end - 1, extra: extra) : nil)
            guard let limit else { continue }
            while sums.milliseconds > limit, start <= end {
                sums.removeFirst(
                    beat(at: start, extra: extra),
                    before: start < end ? beat(at: start + 1, extra: extra) : nil)
                start += 1
            }
        }
        var metrics = sums.metrics
        if alpha1 {
            let beats = (start..<(queue.count + extra.count)).lazy.map {
                beat(at: $0, extra: extra).milliseconds
            }
            metrics.alpha1 = DetrendedFluctuation.alpha1(beats)
        }
        return metrics
    }

    /// The beat at `index` of the stored beats followed by `extra`.
    private func beat(at index: Int, extra: [NNInterval]) -> NNInterval {
        index < queue.count ? queue[index] : extra[index - queue.count]
    }

    /// The beats in the window, oldest first (for tests).
    var beats: ArraySlice<NNInterval> { queue.beats }

    /// The capacity of the window's beat storage (for the memory-bound tests).
    var storageCapacity: Int { queue.storageCapacity }

    /// The window's length in milliseconds; nil when unbounded.
    /// (A NaN length holds nothing, like a negative one.)
    private var limit: Double? { seconds.map { $0.isNaN ? 0 : $0 * 1000 } }
}
