import Foundation
import PolarPMD

/// A recording of a Polar H10's ECG and acceleration made here, frame by frame with PolarPMD's
/// encoder, as the recording sink writes it (`pmd` lines with the raw frames, `ecg_beat` lines),
/// and what its exports must hold, worked out here from the formulas that made it (never by the
/// export's code).
///
/// Two connected stretches: the first 18 ECG frames (73 samples at 130 Hz) with frame 7 lost, and
/// 50 acceleration frames (40 samples at 200 Hz, ±8 g) starting 20 ms after the ECG, frames 0-24
/// raw and 25-49 delta-compressed, frame 12 lost; a disconnection; the second 9 ECG frames, no
/// acceleration. The sensor's ECG period is 7,692,308 ns (its clock a hair off 130 Hz), so frames
/// after the first are timed exactly by the SDK's rule; a first frame (and one after a loss) is
/// counted back at the nominal 1/130 s.
struct PMDRecordingFixture {
    static let device = "A0:9E:1A:12:34:56"
    static let name = "Polar H10 12345678"
    /// 2026-11-26T07:00:00.000Z.
    static let start: Int64 = 1_795_676_400_000
    static let rate = 130
    static let accRate = 200
    static let period: Int64 = 7_692_308
    static let accPeriod: Int64 = 5_000_000
    static let perFrame = 73
    static let accPerFrame = 40
    static let measurementHex = "104b3303"  // 75 bpm, RR 819/1024 s

    /// One stretch as the exports must show it.
    struct Stretch {
        /// The EDF file's start: the first sample's wall time, nanoseconds since the Unix epoch,
        /// to the microsecond (truncated).
        var fileStart: Int64
        /// Add to a sensor time for its wall time (ns).
        var offset: Int64
        /// ECG per slot, losses filled with the last value before them.
        var ecg: [Int32]
        /// Acceleration per ECG-aligned slot (nil: none in the stretch).
        var acc: (x: [Int32], y: [Int32], z: [Int32])?
        /// (onset s, duration s or nil, text), sorted by onset.
        var annotations: [(Double, Double?, String)]
        /// The ECG slots of the true R peaks received.
        var peakSlots: [Int]
        /// The samples received: sensor time, value.
        var ecgReceived: [(Int64, Int32)]
        var accReceived: [(Int64, Int32, Int32, Int32)]
    }

    /// The lines after the header, in the order made (written sorted by time, ties in that order).
    var lines: [(time: Int64, kind: String, text: String)] = []
    var stretches: [Stretch] = []
    /// The `rr_ms` values written, in order (nil for null).
    var rrWritten: [Double?] = []

    /// The recording with every line.
    var text: String { Self.join(lines) }
    /// Without `pmd` and `ecg_beat` lines: the recording an hrm without --ecg would have made.
    var withoutStreams: String { Self.join(lines.filter { $0.kind != "pmd" && $0.kind != "ecg_beat" }) }
    /// Without `ecg_beat` lines: the export finds the R peaks itself.
    var withoutBeats: String { Self.join(lines.filter { $0.kind != "ecg_beat" }) }

    static func join(_ lines: [(time: Int64, kind: String, text: String)]) -> String {
        let header =
            #"{"type":"recording","format":1,"hrm":"0.1.0","start":"\#(iso(start))","command":"record"}"#
        let sorted = lines.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
        return ([header] + sorted.map(\.element.text)).joined(separator: "\n") + "\n"
    }

    /// A line of `kind` for the strap at `time` (ms since the epoch), `rest` its members after `device`.
    mutating func add(_ time: Int64, _ kind: String, _ rest: String) {
        lines.append(
            (
                time, kind,
                #"{"type":"\#(kind)","time":"\#(Self.iso(time))","mono_ms":\#(time - Self.start),"device":"\#(Self.device)"\#(rest)}"#
            ))
    }

    /// `2026-11-26T07:00:00.123Z`.
    static func iso(_ ms: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(ms / 1000))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0,
            c.minute ?? 0, c.second ?? 0, Int(ms % 1000))
    }

    /// A PQRST-like beat around an R peak at 0 (seconds), in microvolts (as RPeakDetectorTests').
    static func beat(_ t: Double) -> Double {
        func wave(_ centre: Double, _ width: Double, _ height: Double) -> Double {
            height * exp(-(t - centre) * (t - centre) / (2 * width * width))
        }
        return wave(-0.2, 0.025, 150) + wave(-0.03, 0.01, -120) + wave(0, 0.012, 1400)
            + wave(0.03, 0.01, -300)
            + wave(0.28, 0.06, 350)
    }

    /// The ECG's slots of R peaks in a stretch of `count` samples: about 0.8 s apart.
    static func peaks(count: Int) -> [Int] {
        var slots: [Int] = []
        var b = 0
        while 40 + 104 * b + (b % 3) * 5 < count - 40 {
            slots.append(40 + 104 * b + (b % 3) * 5)
            b += 1
        }
        return slots
    }

    static func ecgValue(_ n: Int, peaks: [Int]) -> Int32 {
        var value = 80 * sin(2 * Double.pi * 0.2 * Double(n) / Double(rate))
        for p in peaks where abs(n - p) < 80 { value += beat(Double(n - p) / Double(rate)) }
        return Int32(value.rounded())
    }

    static func accValue(_ m: Int) -> (Int32, Int32, Int32) {
        (Int32((300 * sin(Double(m) / 15)).rounded()), Int32(-980 + m % 50), Int32(40 - (m % 9) * 10))
    }

    /// A sample's time by the SDK's rule: counted back from the frame's timestamp at the nominal
    /// rate for a first frame (or one after a loss), else spread evenly since the previous frame's.
    static func ecgTime(frameTimestamp ts: Int64, index j: Int, countedBack: Bool) -> Int64 {
        if countedBack {
            // 1e9 × (72 − j) / 130 never ends in exactly a half: rounding is to the nearest.
            let n = Int64(perFrame - 1 - j) * 1_000_000_000
            return ts - (n + 65) / 130
        }
        return ts - period * Int64(perFrame - 1 - j)
    }

    init() {
        add(Self.start + 300, "status", #","state":"connected""#)
        add(Self.start + 400, "info", #","name":"\#(Self.name)","battery":87"#)
        // Stretch 1: sensor clock at S, wall base (arrival of the sensor time S) at start + 1 s.
        let s1 = makeStretch(
            sensor: 849_000_000_000_000_000, wallBase: Self.start + 1000, frames: 18, lostFrame: 7,
            withACC: true)
        let disconnectedAt = s1 + 300
        add(disconnectedAt, "status", #","state":"disconnected","detail":"link lost""#)
        add(disconnectedAt + 10, "status", #","state":"reconnecting""#)
        stretches[0].annotations.append(
            (Double(disconnectedAt * 1_000_000 - stretches[0].fileStart) / 1e9, nil, "strap disconnected"))
        stretches[0].annotations.sort { $0.0 < $1.0 }
        let reconnected = disconnectedAt + 3000
        add(reconnected, "status", #","state":"connected""#)
        let s2 = makeStretch(
            sensor: 849_000_030_000_000_000, wallBase: reconnected + 500, frames: 9, lostFrame: nil,
            withACC: false)
        var measurement = Self.start + 1000
        while measurement < s2 {
            if measurement < disconnectedAt || measurement > reconnected {
                add(
                    measurement, "measurement",
                    #","bpm":75,"contact":"unsupported","rr_ms":[799.8],"hex":"\#(Self.measurementHex)""#)
            }
            measurement += 1000
        }
        lines.append(
            (
                s2 + 500, "status",
                #"{"type":"status","time":"\#(Self.iso(s2 + 500))","mono_ms":\#(s2 + 500 - Self.start),"state":"stopped"}"#
            ))
    }

    /// Writes one stretch's lines and appends what its exports must hold.
    mutating func makeStretch(
        sensor s: Int64, wallBase: Int64, frames: Int, lostFrame: Int?, withACC: Bool
    ) -> Int64 {
        let count = frames * Self.perFrame
        let peaks = Self.peaks(count: count)
        func arrival(_ sensor: Int64) -> Int64 { wallBase + (sensor - s) / 1_000_000 + 30 }
        var ecgReceived: [(Int64, Int32)] = []
        var ecgBySlot: [Int32] = []
        var timeOfSlot: [Int: Int64] = [:]
        var annotations: [(Double, Double?, String)] = []
        var lastArrival: Int64 = 0
        var firstArrival: (at: Int64, offset: Int64)? = nil
        var firstSampleTime: Int64 = 0
        for k in 0..<frames {
            let ts = s + Int64(Self.perFrame * k + Self.perFrame - 1) * Self.period
            let values = (0..<Self.perFrame).map { Self.ecgValue(Self.perFrame * k + $0, peaks: peaks) }
            if k == lostFrame {
                let held = ecgBySlot.last ?? 0
                ecgBySlot += Array(repeating: held, count: Self.perFrame)
                annotations.append(
                    (
                        Double(Self.perFrame * k) / Double(Self.rate),
                        Double(Self.perFrame) / Double(Self.rate),
                        "ECG samples lost"
                    ))
                continue
            }
            let countedBack = k == 0 || k - 1 == lostFrame
            for j in 0..<Self.perFrame {
                let time = Self.ecgTime(frameTimestamp: ts, index: j, countedBack: countedBack)
                timeOfSlot[Self.perFrame * k + j] = time
                ecgReceived.append((time, values[j]))
                ecgBySlot.append(values[j])
            }
            let bytes = PMDDataFrame.encode(
                type: .ecg, timestamp: UInt64(ts), frameType: 0, content: PMDECGValues.encodeType0(values))
            let at = arrival(ts)
            if firstArrival == nil {
                firstArrival = (at, at * 1_000_000 - ts)
                firstSampleTime = Self.ecgTime(frameTimestamp: ts, index: 0, countedBack: true)
            }
            lastArrival = max(lastArrival, at)
            add(at, "pmd", #","measurement":"ecg","rate_hz":130,"hex":"\#(hex(bytes))""#)
        }
        var acc: (x: [Int32], y: [Int32], z: [Int32])? = nil
        var accReceived: [(Int64, Int32, Int32, Int32)] = []
        if withACC {
            let a = s + 20_000_000
            let shift = Int((Double(a - firstSampleTime) * Double(Self.accRate) / 1e9).rounded())
            var x: [Int32] = Array(repeating: Self.accValue(0).0, count: shift)
            var y: [Int32] = Array(repeating: Self.accValue(0).1, count: shift)
            var z: [Int32] = Array(repeating: Self.accValue(0).2, count: shift)
            if shift > 0 {
                annotations.append((0, Double(shift) / Double(Self.accRate), "ACC samples lost"))
            }
            for f in 0..<50 {
                let first = Self.accPerFrame * f
                let ts = a + Int64(first + Self.accPerFrame - 1) * Self.accPeriod
                if f == 12 {
                    let held = (x.last ?? 0, y.last ?? 0, z.last ?? 0)
                    x += Array(repeating: held.0, count: Self.accPerFrame)
                    y += Array(repeating: held.1, count: Self.accPerFrame)
                    z += Array(repeating: held.2, count: Self.accPerFrame)
                    annotations.append(
                        (
                            Double(first + shift) / Double(Self.accRate),
                            Double(Self.accPerFrame) / Double(Self.accRate), "ACC samples lost"
                        ))
                    continue
                }
                var flat: [Int32] = []
                for m in first..<(first + Self.accPerFrame) {
                    let (vx, vy, vz) = Self.accValue(m)
                    flat += [vx, vy, vz]
                    x.append(vx)
                    y.append(vy)
                    z.append(vz)
                    accReceived.append((a + Int64(m) * Self.accPeriod, vx, vy, vz))
                }
                let compressed = f >= 25
                let content =
                    compressed
                    ? PMDDeltaCoding.encode(flat, channels: 3, resolution: 16)
                    : (PMDACCValues.encodeRaw(flat, frameType: 1) ?? [])
                let bytes = PMDDataFrame.encode(
                    type: .acc, timestamp: UInt64(ts), frameType: 1, compressed: compressed, content: content)
                let at = arrival(ts) - 5
                lastArrival = max(lastArrival, at)
                if let first = firstArrival, at < first.at { firstArrival = (at, at * 1_000_000 - ts) }
                add(at, "pmd", #","measurement":"acc","rate_hz":200,"range_g":8,"hex":"\#(hex(bytes))""#)
            }
            acc = (x, y, z)
        }
        // The wall clock from the stretch's first frame (the first line: the earliest arrival).
        let offset = firstArrival.map { $0.offset } ?? 0
        let wallFirst = firstSampleTime + offset
        let fileStart = wallFirst - ((wallFirst % 1000) + 1000) % 1000
        // ecg_beat lines for the peaks received; rr null after a loss and at the start.
        var previous: Int64? = nil
        var previousFrame = -2
        var peakSlots: [Int] = []
        for p in peaks {
            let frame = p / Self.perFrame
            guard let time = timeOfSlot[p] else {
                previous = nil
                continue
            }
            if let lostFrame, previousFrame < lostFrame, frame > lostFrame { previous = nil }
            previousFrame = frame
            peakSlots.append(p)
            let rr = previous.map { Double(time - $0) / 1e6 }
            let rrText = rr.map { String(format: "%.3f", $0) } ?? "null"
            rrWritten.append(rr.map { Double(String(format: "%.3f", $0)) ?? 0 })
            add(
                (time + offset) / 1_000_000 + 450, "ecg_beat", #","sensor_ns":\#(time),"rr_ms":\#(rrText)"#)
            previous = time
            annotations.append((Double(p) / Double(Self.rate), nil, "R"))
        }
        annotations.sort { $0.0 < $1.0 }
        stretches.append(
            Stretch(
                fileStart: fileStart, offset: offset, ecg: ecgBySlot, acc: acc, annotations: annotations,
                peakSlots: peakSlots, ecgReceived: ecgReceived, accReceived: accReceived))
        return lastArrival
    }

    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// What Tests/EDFCheck/edf_check.py must find in stretch `index`'s file.
    func expectations(_ index: Int) -> [String: Any] {
        let stretch = stretches[index]
        let records = (stretch.ecg.count + Self.rate - 1) / Self.rate
        func padded(_ values: [Int32], _ rate: Int) -> [Double] {
            let total = records * rate
            let last = values.last ?? 0
            return (0..<total).map { Double($0 < values.count ? values[$0] : last) }
        }
        func signal(
            _ label: String, _ dimension: String, _ rate: Int, _ transducer: String, _ values: [Int32]
        )
            -> [String: Any]
        {
            [
                "label": label, "dimension": dimension, "rate": rate, "physical_min": -32768.0,
                "physical_max": 32767.0, "digital_min": -32768, "digital_max": 32767,
                "transducer": transducer,
                "samples": padded(values, rate),
            ]
        }
        var signals = [signal("ECG", "uV", Self.rate, "Polar H10 chest strap electrodes", stretch.ecg)]
        if let acc = stretch.acc {
            let limit = records * Self.accRate
            let transducer = "Polar H10 accelerometer, range 8 g"
            signals.append(signal("ACC X", "mG", Self.accRate, transducer, Array(acc.x.prefix(limit))))
            signals.append(signal("ACC Y", "mG", Self.accRate, transducer, Array(acc.y.prefix(limit))))
            signals.append(signal("ACC Z", "mG", Self.accRate, transducer, Array(acc.z.prefix(limit))))
        }
        let micro = stretch.fileStart / 1000
        let date = Date(timeIntervalSince1970: Double(micro / 1_000_000))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let start = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%06d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0,
            c.minute ?? 0, c.second ?? 0, Int(micro % 1_000_000))
        return [
            "records": records, "start": start, "equipment": Self.name, "signals": signals,
            "annotations": stretch.annotations.map { annotation -> [String: Any] in
                [
                    "onset": annotation.0, "duration": annotation.1.map { $0 as Any } ?? NSNull(),
                    "text": annotation.2,
                ]
            },
        ]
    }
}
