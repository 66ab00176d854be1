/// A moving average over a window centred on a sample, `ahead` samples after it and
/// `size - 1 - ahead` before, as numpy's `convolve(..., mode="same")` with a boxcar places it; the
/// first value stands in for the samples before the first (NeuroKit's `signal_smooth` pads so).
///
/// `push` returns the average centred `ahead` samples back, once there is one.
struct CenteredMean: Sendable {
    let size: Int
    let ahead: Int
    private var ring: [Double]
    private var head = 0
    private var filled = 0
    private var sum = 0.0
    private var sinceResum = 0

    /// A window of `size` samples (1 or more), `ahead` of them (less than `size`) after its centre.
    init(size: Int, ahead: Int) {
        self.size = size
        self.ahead = ahead
        ring = Array(repeating: 0, count: size)
    }

    mutating func push(_ value: Double) -> Double? {
        if filled == 0 {
            for _ in 0..<(size - 1 - ahead) { append(value) }
        }
        append(value)
        return filled == size ? sum / Double(size) : nil
    }

    private mutating func append(_ value: Double) {
        sum += value - ring[head]
        ring[head] = value
        head = head + 1 == size ? 0 : head + 1
        if filled < size { filled += 1 }
        // A running sum drifts by rounding over hours: add it up afresh now and then.
        sinceResum += 1
        if sinceResum >= 4096 {
            sinceResum = 0
            sum = ring.reduce(0, +)
        }
    }
}
