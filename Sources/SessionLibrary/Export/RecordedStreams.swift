package import PolarPMD

/// A recording's PMD streams (a Polar H10's ECG and acceleration, #24) as its lines hold them:
/// every `pmd` frame raw, every `ecg_beat`, and the `status` lines that end a connected stretch,
/// in the order written. Read by `RecordedSession` only when asked (`readingStreams`), so that
/// reading a recording for anything else costs nothing more.
package struct RecordedStreams {
    /// One `pmd` line: a data frame as the strap sent it.
    package struct Frame {
        /// Arrival, milliseconds since the epoch (the line's `time`): when its last sample came.
        package let time: Int64
        package let device: String?
        /// `rate_hz`: the rate hrm started the stream at (the first frame's sample times need it).
        package let rate: Int
        /// `range_g` of an acceleration stream.
        package let range: Int?
        /// `hex`: the whole notification.
        package let bytes: [UInt8]
    }

    /// One `ecg_beat` line: an R peak found live in the ECG.
    package struct Beat {
        package let device: String?
        /// The peak sample's time on the sensor's clock, nanoseconds.
        package let sensorNanoseconds: Int64
        /// Milliseconds since the previous peak; nil for the first after a (re)start.
        package let rr: Double?
    }

    /// A `status` line that ends a connected stretch (`disconnected`, `reconnecting`, `stopped`).
    package struct Cut {
        /// Milliseconds since the epoch.
        package let time: Int64
        /// nil: every strap's (watch's last `stopped`).
        package let device: String?
        /// `disconnected`, `reconnecting` or `stopped`.
        package let state: String
    }

    package enum Item {
        case frame(Frame)
        case beat(Beat)
        case cut(Cut)
    }

    /// In the order written.
    package var items: [Item] = []
    /// How many `pmd` and `ecg_beat` lines there are.
    package var frameCount = 0
    package var beatCount = 0

    package init() {}

    /// The straps that sent frames of `type`, in the order they first did.
    package func devices(sending type: PMDMeasurementType) -> [String] {
        var seen: [String] = []
        for case .frame(let frame) in items {
            guard let device = frame.device, !seen.contains(device), frame.bytes.first == type.rawValue else {
                continue
            }
            seen.append(device)
        }
        return seen
    }
}

/// A connected stretch of one strap's streams, decoded: its samples, where the lost ones were,
/// and how its sensor clock maps to wall time.
package struct SensorStretch {
    /// Samples of one measurement in a stretch: the ones received, each with its slot (its place
    /// counted at the nominal rate from the stream's first sample in the stretch). Slots not taken
    /// are samples lost.
    package struct Run<Sample> {
        package let rate: Int
        package var samples: [Sample] = []
        package var slots: [Int] = []
    }

    /// Why a stretch ended.
    package enum End: Equatable {
        /// A `disconnected` (or `reconnecting`) line at this time (milliseconds since the epoch).
        case disconnected(Int64)
        /// The ECG stopped for longer than `SensorStretches.longestFill` (nanoseconds lost), or
        /// went back in time (0), or changed its rate (0): the next stretch goes on after it.
        case interrupted(Int64)
        /// The session stopped, or the recording ended.
        case ended
    }

    /// Add to a sensor time (nanoseconds) for nanoseconds since the Unix epoch: from the stretch's
    /// first frame, whose `time` is its last sample's arrival.
    package let offset: Int64
    package var ecg: Run<PMDECGSample>?
    package var acc: Run<PMDACCSample>?
    /// The acceleration range the stream was started with (g).
    package var accRange: Int?
    package var end: End = .ended

    /// `sensor` (nanoseconds on the sensor's clock) as nanoseconds since the Unix epoch.
    package func wall(_ sensor: UInt64) -> Int64 { Int64(clamping: sensor) &+ offset }
}

/// One strap's frames decoded into connected stretches (polar-ble-sdk's timing, `PMDDecoder`),
/// with the samples lost inside each placed by time.
package enum SensorStretches {
    /// The longest loss inside a stretch that an export fills (nanoseconds): a longer one ends it.
    package static let longestFill: Int64 = 5_000_000_000

    /// What decoding gave: the stretches in order, and what could not be read.
    package struct Decoded {
        package var stretches: [SensorStretch] = []
        /// Frames that did not decode (for a warning), by the reason's text.
        package var unreadable: [String] = []
    }

    /// `device`'s stretches (nil: the lines that name none and all the others: a recording of one
    /// strap).
    package static func decode(_ streams: RecordedStreams, device: String?) -> Decoded {
        var decoded = Decoded()
        var decoder = PMDDecoder()
        var current: SensorStretch? = nil
        func close(_ end: SensorStretch.End) {
            if var stretch = current {
                stretch.end = end
                decoded.stretches.append(stretch)
            }
            current = nil
            decoder.reset()
        }
        for item in streams.items {
            switch item {
            case .beat: continue
            case .cut(let cut):
                guard cut.device == nil || device == nil || cut.device == device else { continue }
                close(cut.state == "stopped" ? .ended : .disconnected(cut.time))
            case .frame(let frame):
                guard device == nil || frame.device == device else { continue }
                let header: PMDDataFrame
                do {
                    header = try PMDDataFrame(decoding: frame.bytes[...])
                } catch {
                    decoded.unreadable.append(error.description)
                    continue
                }
                guard header.type == .ecg || header.type == .acc else { continue }
                decoder.set(header.type, PMDDecoder.StreamSettings(sampleRate: frame.rate))
                let data: PMDDecodedFrame
                do {
                    data = try decoder.decode(frame.bytes[...])
                } catch {
                    decoded.unreadable.append(error.description)
                    continue
                }
                let offset = frame.time &* 1_000_000 &- Int64(clamping: header.timestamp)
                switch data.data {
                case .ecg(let samples):
                    guard !samples.isEmpty else { continue }
                    if let run = current?.ecg, let last = run.samples.last {
                        let step = Int64(samples[0].timestamp) &- Int64(last.timestamp)
                        if run.rate != frame.rate || step <= 0 {
                            close(.interrupted(0))
                        } else if step - 1_000_000_000 / Int64(max(frame.rate, 1)) > longestFill {
                            close(.interrupted(step))
                        }
                    }
                    if current == nil { current = SensorStretch(offset: offset) }
                    current?.append(ecg: samples, rate: frame.rate)
                case .acc(let samples):
                    guard !samples.isEmpty else { continue }
                    if current == nil { current = SensorStretch(offset: offset) }
                    if current?.accRange == nil { current?.accRange = frame.range }
                    current?.append(acc: samples, rate: frame.rate)
                case .other: continue
                }
            }
        }
        close(.ended)
        return decoded
    }

    /// How many samples at `rate` were lost between samples at `previous` and `next`: the time
    /// between them in sample periods, less one.
    static func lost(from previous: UInt64, to next: UInt64, rate: Int) -> Int {
        guard next > previous, rate > 0 else { return 0 }
        let periods = (Double(next - previous) * Double(rate) / 1e9).rounded()
        return max(0, Int(min(periods, 1e9)) - 1)
    }
}

extension SensorStretch {
    init(offset: Int64) { self.offset = offset }

    /// ECG samples after the ones so far (`Run.append`).
    mutating func append(ecg samples: [PMDECGSample], rate: Int) {
        // Taken out while it grows: a copy left behind would copy its arrays at every frame.
        var run = ecg ?? Run(rate: rate)
        ecg = nil
        run.append(samples, at: \.timestamp, rate: rate)
        ecg = run
    }

    /// Acceleration samples after the ones so far, placed as the ECG's are (slots counted from
    /// the stream's own first sample). A rate that changes mid-stretch leaves the frame out.
    mutating func append(acc samples: [PMDACCSample], rate: Int) {
        guard acc == nil || acc?.rate == rate else { return }
        // Taken out while it grows, as the ECG's.
        var run = acc ?? Run(rate: rate)
        acc = nil
        run.append(samples, at: \.timestamp, rate: rate)
        acc = run
    }
}

extension SensorStretch.Run {
    /// `samples` after the ones so far: each in the next slot, after the slots of any samples lost
    /// at `rate`; a sample no later than the one before is left out.
    mutating func append(_ samples: [Sample], at timestamp: KeyPath<Sample, UInt64>, rate: Int) {
        for sample in samples {
            if let last = self.samples.last, let slot = slots.last {
                guard sample[keyPath: timestamp] > last[keyPath: timestamp] else { continue }
                slots.append(
                    slot + 1
                        + SensorStretches.lost(
                            from: last[keyPath: timestamp], to: sample[keyPath: timestamp], rate: rate))
            } else {
                slots.append(0)
            }
            self.samples.append(sample)
        }
    }
}
