public import HeartRate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Plays a strap's Heart Rate Measurement notifications, one frame per call to `next(at:)`.
///
/// The realistic mode simulates beats, not numbers: the heart rate wanders around a base value
/// (a mean-reverting random walk plus a slow swell, like easy intervals), every beat's length
/// follows from the rate of the moment with a little beat-to-beat variability, and each
/// notification carries the RR intervals of the beats that ended since the previous one, oldest
/// first, as many as fit in the ATT payload. Energy expended grows with the effort, saturates at
/// 0xFFFF and restarts from zero on a control-point reset.
public struct HeartRateGenerator: Sendable {
    public enum Source: Sendable, Equatable {
        /// Simulated beats around `baseBPM`.
        case realistic(baseBPM: Double, variability: Double)
        /// The given values in turn, repeating.
        case series([UInt16])
        /// Raw frames in turn, repeating, sent as they are (malformed ones included).
        case frames([[UInt8]])
        /// Raw frames once each, in order (a recording played back): the simulator sends them at
        /// the stream's `times`; after the last, nothing.
        case replay([[UInt8]])
    }

    public struct Options: Sendable, Equatable {
        public var format: HeartRateMeasurement.ValueFormat = .uint8
        public var includeRR = true
        /// Energy expended at the start, in kJ; nil for none in the frames.
        public var energyStart: UInt16? = nil
        /// kJ per minute at 100 bpm; scales with the heart rate.
        public var energyPerMinute: Double = 40
        /// The most bytes one notification may carry (ATT MTU - 3): 20 at the default MTU.
        public var maximumFrameLength = 20
        public var seed: UInt64 = 1
        /// Realistic: the base heart rate climbs linearly to `to` bpm over the first `seconds` after
        /// the strap's first notification, then stays there (a workout through the zones): a
        /// client that connected late, on a loaded machine, still sees the whole climb.
        public var climb: (to: Double, seconds: Double)? = nil

        public init() {}

        public static func == (a: Options, b: Options) -> Bool {
            a.format == b.format && a.includeRR == b.includeRR && a.energyStart == b.energyStart
                && a.energyPerMinute == b.energyPerMinute && a.maximumFrameLength == b.maximumFrameLength
                && a.seed == b.seed && a.climb?.to == b.climb?.to && a.climb?.seconds == b.climb?.seconds
        }
    }

    public let source: Source
    public let options: Options
    public var contact: HeartRateMeasurement.SensorContact = .detected
    /// Replay: the simulator time (seconds) the stream's times count from, set when the first
    /// frame is due and moved on when a frame goes out late (after a reconnect).
    public var replayAnchor: Double? = nil

    private var random: SeededRandom
    private var index = 0
    private var lastTime: Double? = nil
    private var bpm: Double
    private var drift: Double = 0
    /// The moment the last simulated beat ended, in seconds of scenario time.
    private var lastBeat: Double? = nil
    /// When the first frame was asked for: where a climb starts.
    private var firstFrameAt: Double? = nil
    private var energy: Double
    /// Beats that ended but did not fit in earlier frames, sent in later ones. Bounded, as a real
    /// strap's buffer is: past `pendingLimit` the oldest are dropped.
    private static let pendingLimit = 64
    /// Each pending beat's end (scenario seconds) and length (1/1024 s). Beats simulated ahead of
    /// the frames (for the ECG, `beats(through:)`) wait here until a frame's time reaches them.
    private var pendingRR: [(end: Double, rr: UInt16)] = []
    /// How far the beats have been simulated (a frame's time, or further for the ECG).
    private var simulatedUntil: Double? = nil
    /// The ends of the latest beats (scenario seconds), oldest first: the R peaks of the ECG.
    private var beatLog: [Double] = []
    private static let beatLogLimit = 256

    public init(source: Source, options: Options = Options()) {
        self.source = source
        self.options = options
        self.random = SeededRandom(seed: options.seed)
        if case .realistic(let base, _) = source { bpm = base } else { bpm = 0 }
        energy = Double(options.energyStart ?? 0)
    }

    /// Replay: which frame goes out next (its index), nil once all have; `next(at:)` sends it.
    public var nextReplayIndex: Int? {
        guard case .replay(let frames) = source, index < frames.count else { return nil }
        return index
    }

    /// Energy expended back to zero: the Heart Rate Control Point's only command.
    public mutating func resetEnergyExpended() {
        energy = 0
    }

    /// The frame to notify at scenario time `time` (seconds; calls come in increasing time).
    public mutating func next(at time: Double) -> [UInt8] {
        defer {
            index += 1
            lastTime = time
        }
        switch source {
        case .frames(let frames):
            return frames.isEmpty ? [] : frames[index % frames.count]
        case .replay(let frames):
            return index < frames.count ? frames[index] : []
        case .series(let values):
            let value = values.isEmpty ? 0 : values[index % values.count]
            advanceEnergy(to: time, bpm: Double(value))
            return encode(bpm: value, rr: [], at: time)
        case .realistic(let base, let variability):
            if firstFrameAt == nil { firstFrameAt = time }
            let rr = simulateBeats(
                until: time, base: climbing(base, at: time - (firstFrameAt ?? time)), variability: variability
            )
            advanceEnergy(to: time, bpm: bpm)
            return encode(bpm: UInt16(max(bpm.rounded(), 0)), rr: rr, at: time)
        }
    }

    private func climbing(_ base: Double, at time: Double) -> Double {
        guard let climb = options.climb, climb.seconds > 0 else { return base }
        return base + (climb.to - base) * min(max(time / climb.seconds, 0), 1)
    }

    /// The ends of the beats simulated so far and through `time` (scenario seconds; realistic
    /// mode only, empty otherwise), oldest first, the latest `beatLogLimit` of them: what an ECG
    /// of the same heart shows as R peaks. Beats past the latest frame's time are simulated now
    /// and reported in the frames whose time reaches them, so the RR intervals on 0x2A37 are
    /// those of these beats.
    public mutating func beats(through time: Double) -> [Double] {
        guard case .realistic(let base, let variability) = source else { return [] }
        if time > (simulatedUntil ?? -Double.infinity) {
            _ = simulateBeats(
                until: time, base: climbing(base, at: time - (firstFrameAt ?? time)), variability: variability
            )
        }
        return beatLog
    }

    private mutating func simulateBeats(until time: Double, base: Double, variability: Double) -> [UInt16] {
        // Until the ECG asks for beats ahead, `simulatedUntil` is the previous frame's time.
        let previous = simulatedUntil ?? lastTime ?? (time - 1)
        simulatedUntil = max(time, previous)
        var beatTime = lastBeat ?? previous
        let step = max(time - previous, 0)
        // Mean-reverting walk with a slow swell of ±8 % over about three minutes.
        drift += (-drift * 0.1 + random.gaussian() * variability * 0.3) * step
        let swell = base * 0.08 * sin(2 * .pi * time / 180)
        bpm = min(max(base + swell + drift, 30), 240)
        while true {
            let nominal = 60 / bpm
            let jitter = 1 + random.gaussian() * 0.02 * max(variability, 0) / 4
            let interval = min(max(nominal * jitter, 0.25), 2.0)
            if beatTime + interval > time { break }
            beatTime += interval
            pendingRR.append((beatTime, UInt16(min((interval * 1024).rounded(), 65535))))
            if pendingRR.count > Self.pendingLimit { pendingRR.removeFirst() }
            beatLog.append(beatTime)
            if beatLog.count > Self.beatLogLimit { beatLog.removeFirst(beatLog.count - Self.beatLogLimit) }
        }
        lastBeat = beatTime
        return pendingRR.map(\.rr)
    }

    private mutating func advanceEnergy(to time: Double, bpm: Double) {
        guard options.energyStart != nil else { return }
        let minutes = max(time - (lastTime ?? time), 0) / 60
        energy = min(energy + options.energyPerMinute * minutes * bpm / 100, Double(UInt16.max))
    }

    private mutating func encode(bpm: UInt16, rr: [UInt16], at time: Double) -> [UInt8] {
        let energyValue = options.energyStart == nil ? nil : UInt16(energy)
        let fixed = 1 + (options.format == .uint16 ? 2 : 1) + (energyValue == nil ? 0 : 2)
        let room = max((options.maximumFrameLength - fixed) / 2, 0)
        // Only beats that have ended by the frame's time: those simulated ahead wait.
        let ended = pendingRR.prefix { $0.end <= time }.count
        let sent = options.includeRR ? pendingRR.prefix(min(room, ended)).map(\.rr) : []
        pendingRR.removeFirst(options.includeRR ? sent.count : ended)
        let value = options.format == .uint8 ? min(bpm, 255) : bpm
        let measurement = try? HeartRateMeasurement(
            heartRate: value, format: options.format, sensorContact: contact,
            energyExpended: energyValue, rrIntervals: RRIntervals(ticks: sent))
        return measurement?.encoded() ?? []
    }
}
