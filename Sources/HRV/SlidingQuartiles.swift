/// The quartiles of the most recent `capacity` values, kept sorted as values come and go so that
/// each update costs one binary search and a short move, with no allocation once full.
///
/// Quartiles interpolate linearly between order statistics (position p × (n − 1)), as pandas'
/// rolling quantile does, which neurokit2's implementation of Lipponen & Tarvainen uses.
struct SlidingQuartiles: Sendable {
    private var arrival: RingBuffer<Double>
    private var sorted: [Double] = []

    init(capacity: Int) {
        arrival = RingBuffer(capacity: capacity)
        sorted.reserveCapacity(arrival.capacity)
    }

    var count: Int { sorted.count }

    /// Adds `value` (non-finite values count as the largest finite one, so the order stays
    /// total), dropping the oldest value when full.
    mutating func insert(_ value: Double) {
        let value = value.isNaN || value > .greatestFiniteMagnitude ? .greatestFiniteMagnitude : value
        if let displaced = arrival.append(value) {
            let index = insertionIndex(of: displaced)
            if index < sorted.count, sorted[index] == displaced { sorted.remove(at: index) }
        }
        sorted.insert(value, at: insertionIndex(of: value))
    }

    /// Half the interquartile range; 0 when empty.
    var quartileDeviation: Double {
        (quantile(0.75) - quantile(0.25)) / 2
    }

    mutating func removeAll() {
        arrival.removeAll()
        sorted.removeAll(keepingCapacity: true)
    }

    var storageCapacity: Int { max(arrival.storageCapacity, sorted.capacity) }

    private func quantile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let position = p * Double(sorted.count - 1)
        let below = Int(position)
        let fraction = position - Double(below)
        guard below + 1 < sorted.count else { return sorted[below] }
        return sorted[below] + (sorted[below + 1] - sorted[below]) * fraction
    }

    /// The first index whose value is not below `value`.
    private func insertionIndex(of value: Double) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
