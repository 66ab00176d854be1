/// Finds R peaks in an ECG as its samples arrive, with NeuroKit's default method ("neurokit":
/// `ecg_clean` then `_ecg_findpeaks_neurokit`, neurokit2 0.2) adapted to a stream.
///
/// 1. Clean: a 5th-order Butterworth high-pass at 0.5 Hz (run forwards only, see
///    `ButterworthHighPass`), then NeuroKit's powerline smoothing (a moving average one 50 Hz
///    period wide, run forwards and backwards: a centred triangle).
/// 2. The cleaned signal's gradient (central differences), its absolute value smoothed over
///    0.1 s (a centred boxcar), and that averaged over 0.75 s; where the smoothed gradient
///    exceeds 1.5 times the average, a QRS complex.
/// 3. A QRS shorter than 0.4 times the mean QRS length is ignored (NeuroKit's mean is over the
///    whole recording, this one over the complexes so far); in the others, the most prominent
///    local maximum of the cleaned signal is the R peak (from 250 Hz on, moved to the highest
///    sample within 6 ms before the high-pass: see `refined`), kept when it comes more than 0.3 s after
///    the last one (and after the stream's start, as NeuroKit's list starts at sample 0).
///
/// Each peak is reported once its QRS has ended and the 0.75 s average has seen it: about 0.45 s
/// after the peak's sample. Feed samples at the nominal rate without gaps; at a gap (a lost
/// frame: `PMDDecodedFrame.missingSamples`; a reconnection) call `finish` for the peaks held
/// back, then `reset`. Tests/ECGCheck compares it with neurokit2's `ecg_peaks`.
public struct RPeakDetector: Sendable {
    /// Samples per second.
    public let sampleRate: Double

    private let minimumDelay: Int
    private let refinement: Int
    private var highPass: ButterworthHighPass
    private let powerlineKernel: [Double]
    private var powerlineRing: [Double]
    private var unfilteredRing: [Double]
    private var powerlineFilled = 0
    private var smooth: CenteredMean
    private var average: CenteredMean
    private let capacity: Int
    private var cleaned: [Double]
    private var unfiltered: [Double]
    private var times: [Int64]
    private var smoothed: [Double]

    private var rawCount = 0
    private var cleanedCount = 0
    private var smoothCount = 0
    private var averageCount = 0
    private var previousQRS: Bool?
    private var qrsStart: Int?
    private var lengthSum = 0
    private var lengthCount = 0
    private var lastPeakIndex = 0
    private var lastPeakTime: Int64?
    private var lastRaw = 0.0
    private var finishing = false
    private var thresholdFloor: Double?
    private var lastTime: Int64 = 0
    private var interval: Int64 = 0

    /// A detector for samples at `sampleRate` Hz (the H10's ECG: 130); rates outside 10 to
    /// 10,000 Hz, or not numbers, are taken as the nearest of those bounds.
    public init(sampleRate: Double) {
        let sampleRate = sampleRate.isNaN ? 10 : min(max(sampleRate, 10), 10_000)
        self.sampleRate = sampleRate
        minimumDelay = Int((0.3 * sampleRate).rounded(.toNearestOrEven))
        // 6 ms: none at 130 Hz, where the high-pass's lead is under half a sample.
        refinement = Int(0.006 * sampleRate)
        highPass = ButterworthHighPass(order: 5, cutoff: 0.5, sampleRate: sampleRate)
        // NeuroKit: b = ones(int(fs / 50)) (2 below 100 Hz), filtfilt: b's autocorrelation.
        let taps = sampleRate >= 100 ? max(1, Int(sampleRate / 50)) : 2
        powerlineKernel = (-(taps - 1)...(taps - 1)).map { Double(taps - abs($0)) / Double(taps * taps) }
        powerlineRing = Array(repeating: 0, count: powerlineKernel.count)
        unfilteredRing = powerlineRing
        let smoothSize = max(1, Int((0.1 * sampleRate).rounded(.toNearestOrEven)))
        let averageSize = max(1, Int((0.75 * sampleRate).rounded(.toNearestOrEven)))
        // numpy's "same" convolution with a boxcar of `size` covers (size - 1) / 2 samples after
        // the centre (integer division) and the rest before: 6 and 6 for 13, 48 and 49 for 98.
        smooth = CenteredMean(size: smoothSize, ahead: (smoothSize - 1) / 2)
        average = CenteredMean(size: averageSize, ahead: (averageSize - 1) / 2)
        var capacity = 256
        while capacity < Int(6 * sampleRate) + 256 { capacity *= 2 }
        self.capacity = capacity
        cleaned = Array(repeating: 0, count: capacity)
        unfiltered = cleaned
        times = Array(repeating: 0, count: capacity)
        smoothed = Array(repeating: 0, count: capacity)
    }

    /// How many samples after a peak it is reported at the earliest.
    public var latency: Int { powerlineKernel.count / 2 + 1 + smooth.ahead + average.ahead + 1 }

    /// Forget everything: the next sample starts a new stream (its first peak has no RR).
    public mutating func reset() {
        self = RPeakDetector(sampleRate: sampleRate)
    }

    /// The next sample: its value (microvolts) and its time (any unit and clock; PMD's sensor
    /// nanoseconds). Returns the R peak whose QRS this sample closed, if any. A value that is not
    /// a finite number counts as the one before (it would poison the filters for good).
    public mutating func process(_ value: Double, time: Int64) -> RPeak? {
        let value = value.isFinite ? value : lastRaw
        if rawCount > 0 { interval = time &- lastTime }
        lastRaw = value
        lastTime = time
        times[rawCount & (capacity - 1)] = time
        rawCount += 1
        return step(value, limit: Int.max)
    }

    /// The peaks still held back at the end of a recording (or before a gap), found as though the
    /// last sample went on, the QRS threshold held where the real samples left it; only peaks
    /// among the samples given count. The detector must be reset before more samples.
    public mutating func finish() -> [RPeak] {
        guard rawCount > 1 else { return [] }
        let real = rawCount
        finishing = true
        var peaks: [RPeak] = []
        for _ in 0...(latency + 1) {
            lastTime = lastTime &+ interval
            times[rawCount & (capacity - 1)] = lastTime
            rawCount += 1
            if let peak = step(lastRaw, limit: real) { peaks.append(peak) }
        }
        return peaks
    }

    private mutating func step(_ value: Double, limit: Int) -> RPeak? {
        let filtered = highPass.step(value)
        // Powerline smoothing: a centred kernel, the first value standing in before the start.
        // The same smoothing of the samples before the high-pass: zero phase, for placing the peak.
        if powerlineFilled == 0 {
            for index in 0..<(powerlineKernel.count / 2) {
                powerlineRing[index] = filtered
                unfilteredRing[index] = value
            }
            powerlineFilled = powerlineKernel.count / 2
        }
        if powerlineFilled < powerlineKernel.count {
            powerlineRing[powerlineFilled] = filtered
            unfilteredRing[powerlineFilled] = value
            powerlineFilled += 1
            if powerlineFilled < powerlineKernel.count { return nil }
        } else {
            powerlineRing.removeFirst()
            powerlineRing.append(filtered)
            unfilteredRing.removeFirst()
            unfilteredRing.append(value)
        }
        var clean = 0.0
        var smoothRaw = 0.0
        for index in powerlineKernel.indices {
            clean += powerlineKernel[index] * powerlineRing[index]
            smoothRaw += powerlineKernel[index] * unfilteredRing[index]
        }
        cleaned[cleanedCount & (capacity - 1)] = clean
        unfiltered[cleanedCount & (capacity - 1)] = smoothRaw
        cleanedCount += 1
        // The gradient as numpy's: one-sided at the first sample, central after.
        guard cleanedCount >= 2 else { return nil }
        let newest = cleaned[(cleanedCount - 1) & (capacity - 1)]
        var peak: RPeak?
        if cleanedCount == 2 {
            peak = gradient(abs(newest - cleaned[0]), limit: limit)
        } else {
            let older = cleaned[(cleanedCount - 3) & (capacity - 1)]
            peak = gradient(abs(newest - older) / 2, limit: limit)
        }
        return peak
    }

    private mutating func gradient(_ absolute: Double, limit: Int) -> RPeak? {
        guard let smoothValue = smooth.push(absolute) else { return nil }
        smoothed[smoothCount & (capacity - 1)] = smoothValue
        smoothCount += 1
        guard let averageValue = average.push(smoothValue) else { return nil }
        let index = averageCount
        averageCount += 1
        // While finishing, the padding's flat line would pull the average down until a P or T
        // wave passed for a QRS: the threshold stays where the real samples left it.
        if finishing && thresholdFloor == nil { thresholdFloor = averageValue }
        let qrs = smoothed[index & (capacity - 1)] > 1.5 * max(averageValue, thresholdFloor ?? 0)
        defer { previousQRS = qrs }
        guard let previous = previousQRS else { return nil }
        if !previous && qrs {
            qrsStart = index - 1
            return nil
        }
        guard previous && !qrs, let start = qrsStart else { return nil }
        qrsStart = nil
        return complex(from: start, to: index - 1, limit: limit)
    }

    /// The QRS from `start` (the last sample below the threshold) to `end` (the last above),
    /// NeuroKit's `signal[beg:end]`.
    private mutating func complex(from start: Int, to end: Int, limit: Int) -> RPeak? {
        let length = end - start
        lengthSum += length
        lengthCount += 1
        guard Double(length) >= 0.4 * Double(lengthSum) / Double(lengthCount) else { return nil }
        // A complex longer than the buffers hold is noise, not a QRS.
        guard cleanedCount - start < capacity, length >= 3 else { return nil }
        guard let offset = mostProminentMaximum(from: start, count: length) else { return nil }
        let index = refined(start + offset, within: start..<end)
        guard index - lastPeakIndex > minimumDelay, index < limit else { return nil }
        lastPeakIndex = index
        let time = times[index & (capacity - 1)]
        let rr = lastPeakTime.map { time &- $0 }
        lastPeakTime = time
        return RPeak(sampleIndex: index, time: time, rr: rr, amplitude: cleaned[index & (capacity - 1)])
    }

    /// The highest sample of the signal before the high-pass (smoothed like the rest) within
    /// `refinement` samples of `index` and inside `bounds`.
    ///
    /// NeuroKit's cleaned signal is high-passed forwards and backwards (zero phase); the
    /// forward-only high-pass here leads by 2 to 4 ms at QRS frequencies, which is under half a
    /// sample at 130 Hz but a sample or two from 250 Hz on. The samples before the high-pass have
    /// no lead, and within so few milliseconds a 0.5 Hz high-pass takes away only a constant.
    private func refined(_ index: Int, within bounds: Range<Int>) -> Int {
        guard refinement > 0 else { return index }
        let mask = capacity - 1
        var best = index
        for candidate in max(
            bounds.lowerBound, index - refinement)...min(bounds.upperBound - 1, index + refinement)
        where unfiltered[candidate & mask] > unfiltered[best & mask] {
            best = candidate
        }
        return best
    }

    /// The offset of the local maximum with the greatest prominence among `count` cleaned values
    /// from `start`, as scipy's `find_peaks` and `peak_prominences` find them within that slice
    /// (a plateau's middle; the first of equal prominences). nil when there is none.
    private func mostProminentMaximum(from start: Int, count: Int) -> Int? {
        let mask = capacity - 1
        func value(_ offset: Int) -> Double { cleaned[(start + offset) & mask] }
        var best: Int?
        var bestProminence = -Double.infinity
        var offset = 1
        while offset < count - 1 {
            if value(offset - 1) < value(offset) {
                var ahead = offset + 1
                while ahead < count - 1 && value(ahead) == value(offset) { ahead += 1 }
                if value(ahead) < value(offset) {
                    let peak = (offset + ahead - 1) / 2
                    let height = value(peak)
                    var leftMinimum = height
                    var left = peak
                    while left >= 0 && value(left) <= height {
                        leftMinimum = min(leftMinimum, value(left))
                        left -= 1
                    }
                    var rightMinimum = height
                    var right = peak
                    while right <= count - 1 && value(right) <= height {
                        rightMinimum = min(rightMinimum, value(right))
                        right += 1
                    }
                    let prominence = height - max(leftMinimum, rightMinimum)
                    if prominence > bestProminence {
                        bestProminence = prominence
                        best = peak
                    }
                    offset = ahead
                }
            }
            offset += 1
        }
        return best
    }
}
