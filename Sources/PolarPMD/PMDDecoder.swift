/// The samples of one data frame, with their times.
public enum PMDFrameData: Hashable, Sendable {
    /// An ECG frame's samples.
    case ecg([PMDECGSample])
    /// An acceleration frame's samples.
    case acc([PMDACCSample])
    /// A frame of a measurement this package does not read (kept whole).
    case other(PMDDataFrame)
}

/// One decoded data frame: its header and its samples.
public struct PMDDecodedFrame: Hashable, Sendable {
    /// The frame's header and bytes.
    public let frame: PMDDataFrame
    /// Its samples with their times.
    public let data: PMDFrameData
    /// About how many samples were lost between the previous frame of its kind and this one (a
    /// notification that never came), judged from the time between them and the sample rate; 0
    /// when none were, or when that cannot be told (a first frame, no rate).
    public let missingSamples: Int
}

/// Reads the data characteristic's frames of one connection, as polar-ble-sdk's `BlePMDClient`
/// does: it keeps each measurement's settings (the sample rate asked for, the factor the start
/// response reported) and the previous frame's timestamp per measurement and frame type, from
/// which each sample's time is derived (`PMDTimestamps`).
///
/// Call `started` after a successful start response, `stopped` after a stop, and `reset` when the
/// link drops (the SDK forgets the previous timestamps then: the next frame counts from the rate).
public struct PMDDecoder: Sendable {
    /// A measurement's settings as the decoder needs them.
    public struct StreamSettings: Hashable, Sendable {
        /// Samples per second (0 when unknown).
        public var sampleRate: Int
        /// The factor the start response reported (1 when none).
        public var factor: Float

        /// Settings of `sampleRate` Hz and `factor`.
        public init(sampleRate: Int, factor: Float = 1) {
            self.sampleRate = sampleRate
            self.factor = factor
        }
    }

    /// How a frame's sample times are derived after frames were lost (see `missingSamples`).
    public enum GapTiming: Hashable, Sendable {
        /// As the SDK does: spread over the time since the previous frame, lost samples' time
        /// and all, so that the samples after a loss seem slower.
        case sdk
        /// Counted back from the frame's timestamp at the sample rate, as for a first frame: the
        /// samples keep their spacing, and the lost ones leave a gap in time.
        case sampleRate
    }

    /// How sample times are derived after frames were lost: `sampleRate` unless told.
    public var gapTiming: GapTiming

    private var settings: [PMDMeasurementType: StreamSettings] = [:]
    private var previous: [UInt16: UInt64] = [:]

    /// A decoder that knows no measurement yet, timing samples after a loss with `gapTiming`.
    public init(gapTiming: GapTiming = .sampleRate) { self.gapTiming = gapTiming }

    /// `type` started with `selected` settings; `response` is the start response (its factor, if
    /// it reports one, scales some frame types).
    public mutating func started(
        _ type: PMDMeasurementType, selected: PMDSelectedSettings,
        response: PMDAvailableSettings = PMDAvailableSettings()
    ) {
        settings[type] = StreamSettings(
            sampleRate: selected.values[.sampleRate] ?? 0, factor: response.factor ?? 1)
    }

    /// `type` runs with `settings` (when they are known some other way: a recording).
    public mutating func set(_ type: PMDMeasurementType, _ settings: StreamSettings) {
        self.settings[type] = settings
    }

    /// `type` was stopped: the SDK forgets every previous timestamp then.
    public mutating func stopped(_ type: PMDMeasurementType) {
        previous.removeAll()
    }

    /// The link dropped: previous timestamps forgotten, settings kept for the restart.
    public mutating func reset() {
        previous.removeAll()
    }

    /// The previous timestamp kept for `type`'s frames of `frameType` (compressed or not), nil when
    /// none: what the next such frame's sample times count from.
    public func previousTimestamp(_ type: PMDMeasurementType, frameType: UInt8, compressed: Bool) -> UInt64? {
        previous[UInt16(type.rawValue) << 8 | UInt16(frameType & 0x7F | (compressed ? 0x80 : 0))]
    }

    /// The frame in `bytes` with its samples and their times. The frame's timestamp becomes its
    /// measurement's previous one as soon as its header is read, even when its samples cannot be
    /// (as in the SDK). Throws the errors of `PMDDataFrame`, `PMDECGValues`, `PMDACCValues` and
    /// `PMDTimestamps`.
    public mutating func decode(_ bytes: ArraySlice<UInt8>) throws(PMDError) -> PMDDecodedFrame {
        let frame = try PMDDataFrame(decoding: bytes)
        let key = UInt16(frame.type.rawValue) << 8 | UInt16(frame.key)
        let before = previous[key]
        previous[key] = frame.timestamp
        let stream = settings[frame.type] ?? StreamSettings(sampleRate: 0)
        switch frame.type {
        case .ecg:
            let values = try PMDECGValues.decode(frame)
            let (previous, missing) = gap(frame, count: values.count, before: before, rate: stream.sampleRate)
            let times = try PMDTimestamps.times(
                count: values.count, timestamp: frame.timestamp, previous: previous,
                sampleRate: stream.sampleRate)
            var samples: [PMDECGSample] = []
            samples.reserveCapacity(values.count)
            for (value, time) in zip(values, times) {
                samples.append(
                    PMDECGSample(timestamp: time, microvolts: value.microvolts, status: value.status))
            }
            return PMDDecodedFrame(frame: frame, data: .ecg(samples), missingSamples: missing)
        case .acc:
            let values = try PMDACCValues.decode(frame, factor: stream.factor)
            let count = values.count / 3
            let (previous, missing) = gap(frame, count: count, before: before, rate: stream.sampleRate)
            let times = try PMDTimestamps.times(
                count: count, timestamp: frame.timestamp, previous: previous, sampleRate: stream.sampleRate)
            var samples: [PMDACCSample] = []
            samples.reserveCapacity(count)
            for index in 0..<count {
                samples.append(
                    PMDACCSample(
                        timestamp: times[index], x: values[3 * index], y: values[3 * index + 1],
                        z: values[3 * index + 2]))
            }
            return PMDDecodedFrame(frame: frame, data: .acc(samples), missingSamples: missing)
        default:
            return PMDDecodedFrame(frame: frame, data: .other(frame), missingSamples: 0)
        }
    }

    /// The previous timestamp to time `count` samples from, and how many samples seem lost since
    /// it: a loss when the time since the previous frame holds half a frame (and 2 samples) or
    /// more beyond this frame's samples at the nominal rate. A sensor's clock runs within a
    /// fraction of a percent of its nominal rate, far from that.
    private func gap(_ frame: PMDDataFrame, count: Int, before: UInt64?, rate: Int) -> (UInt64?, Int) {
        guard let before, before != 0, frame.timestamp > before, rate > 0 else { return (before, 0) }
        let spanned = min(Double(frame.timestamp - before) * Double(rate) / 1e9, 1e15)
        let beyond = spanned - Double(count)
        guard beyond >= max(2, Double(count) / 2) else { return (before, 0) }
        return (gapTiming == .sdk ? before : nil, Int(beyond.rounded()))
    }
}
