import ECG
package import EDF
import PolarPMD

/// A recording's ECG and acceleration (#24) as EDF+ files and CSV files: `hrm export --format edf`
/// and the ECG and ACC files beside `--format csv`.
///
/// EDF+C is continuous, so each connected stretch with ECG is a file of its own (`SensorStretches`
/// cuts them: a disconnection, a loss of more than 5 s, a clock that went back). Inside one, a
/// loss (a frame that never came) is filled with the last value received before it and
/// annotated `ECG samples lost` (`ACC samples lost`) with its duration; the samples received keep
/// their places at the nominal rate, so that every sample is at its time.
package enum StreamExport {
    /// Where the R peaks came from.
    package enum PeakSource: Equatable {
        /// The recording's `ecg_beat` lines (found live by hrm watch/record).
        case recorded
        /// Found by the export in the recorded ECG (`RPeakDetector`): the recording has none.
        case detected
    }

    /// The EDF+ files of one strap's streams, one per stretch with ECG, in order.
    package struct EDFOutput {
        package var files: [EDFFile] = []
        package var peaks: PeakSource = .recorded
        /// What was odd but not fatal (ECG beyond the channel's range, clipped).
        package var warnings: [String] = []
    }

    /// Annotation texts.
    package static let peakText = "R"
    package static let disconnectedText = "strap disconnected"
    package static let interruptedText = "ECG stream interrupted"

    /// The files of `decoded`'s stretches with ECG; R peaks from `beats` (the strap's `ecg_beat`
    /// lines), or found here when there are none. `equipment` names the strap in the header.
    package static func edf(
        _ decoded: SensorStretches.Decoded, beats: [RecordedStreams.Beat], equipment: String?
    ) -> EDFOutput {
        var output = EDFOutput()
        output.peaks = beats.isEmpty ? .detected : .recorded
        var clipped = 0
        for stretch in decoded.stretches {
            guard let file = file(stretch, beats: beats, equipment: equipment, clipped: &clipped) else {
                continue
            }
            output.files.append(file)
        }
        if clipped > 0 {
            output.warnings.append(
                "\(clipped) ECG sample\(clipped == 1 ? "" : "s") beyond -32768...32767 µV clipped to it (the EDF channel's range)"
            )
        }
        return output
    }

    /// Nanoseconds from slot 0 to `slot` at `rate`, rounded.
    static func nanoseconds(_ slot: Int, rate: Int) -> Int64 {
        let rate = Int64(max(rate, 1))
        return (Int64(slot) * 1_000_000_000 + rate / 2) / rate
    }

    /// One stretch's file, nil without ECG.
    static func file(
        _ stretch: SensorStretch, beats: [RecordedStreams.Beat], equipment: String?, clipped: inout Int
    ) -> EDFFile? {
        guard let ecg = stretch.ecg, let first = ecg.samples.first, let lastSlot = ecg.slots.last else {
            return nil
        }
        let rate = ecg.rate
        var annotations: [EDFAnnotation] = []
        var microvolts: [Int32] = []
        microvolts.reserveCapacity(lastSlot + 1)
        for (sample, slot) in zip(ecg.samples, ecg.slots) {
            if let held = microvolts.last, slot > microvolts.count {
                annotations.append(
                    EDFAnnotation(
                        onset: nanoseconds(microvolts.count, rate: rate),
                        duration: nanoseconds(slot - microvolts.count, rate: rate), text: "ECG samples lost"))
                microvolts.append(contentsOf: repeatElement(held, count: slot - microvolts.count))
            }
            if sample.microvolts > 32767 || sample.microvolts < -32768 { clipped += 1 }
            microvolts.append(sample.microvolts)
        }
        let records = (microvolts.count + rate - 1) / rate
        var signals = [EDFSignal.ecg(microvolts: microvolts, rate: rate)]
        if let acc = stretch.acc, let accFirst = acc.samples.first {
            let (axes, lost) = placed(
                acc, shift: accFirst.timestamp, against: first.timestamp, records: records)
            if !axes.x.isEmpty {
                let transducer =
                    "Polar H10 accelerometer" + (stretch.accRange.map { ", range \($0) g" } ?? "")
                signals.append(
                    .acceleration(axis: "X", milliG: axes.x, rate: acc.rate, transducer: transducer))
                signals.append(
                    .acceleration(axis: "Y", milliG: axes.y, rate: acc.rate, transducer: transducer))
                signals.append(
                    .acceleration(axis: "Z", milliG: axes.z, rate: acc.rate, transducer: transducer))
                annotations += lost
            }
        }
        for slot in peakSlots(ecg, beats: beats) {
            annotations.append(EDFAnnotation(onset: nanoseconds(slot, rate: rate), text: peakText))
        }
        // To the microsecond (truncated), as the CSV's times: an arrival time in milliseconds
        // places the sensor's clock no closer, and readers keep no finer a start.
        let wall = stretch.wall(first.timestamp)
        let start = wall - ((wall % 1000) + 1000) % 1000
        switch stretch.end {
        case .disconnected(let time):
            annotations.append(EDFAnnotation(onset: time &* 1_000_000 &- start, text: disconnectedText))
        case .interrupted(let lost) where lost > 0:
            let period = nanoseconds(1, rate: rate)
            annotations.append(
                EDFAnnotation(
                    onset: nanoseconds(microvolts.count, rate: rate), duration: max(lost - period, 0),
                    text: "ECG samples lost"))
        case .interrupted:
            annotations.append(
                EDFAnnotation(onset: nanoseconds(microvolts.count, rate: rate), text: interruptedText))
        case .ended: break
        }
        annotations.sort { $0.onset < $1.onset }
        return EDFFile(
            start: EDFDateTime(unixNanoseconds: start), equipment: equipment, signals: signals,
            annotations: annotations)
    }

    /// The acceleration on the ECG's slots: its first sample at its time from the ECG's first
    /// (`shift` against `origin`, sensor nanoseconds), those before the ECG left out, those past
    /// the file's `records` too; the slots before its first and the ones lost filled (the first
    /// value before it, the last before a loss) and annotated.
    static func placed(
        _ acc: SensorStretch.Run<PMDACCSample>, shift first: UInt64, against origin: UInt64, records: Int
    ) -> (axes: (x: [Int32], y: [Int32], z: [Int32]), lost: [EDFAnnotation]) {
        let rate = acc.rate
        let offset = Int(
            max(
                min(
                    (Double(Int64(clamping: first) &- Int64(clamping: origin)) * Double(rate) / 1e9)
                        .rounded(), 1e12), -1e12))
        let limit = records * rate
        var x: [Int32] = []
        var y: [Int32] = []
        var z: [Int32] = []
        var lost: [EDFAnnotation] = []
        for (sample, slot) in zip(acc.samples, acc.slots) {
            let at = slot + offset
            guard at >= 0 else { continue }
            guard at < limit else { break }
            if at > x.count {
                lost.append(
                    EDFAnnotation(
                        onset: nanoseconds(x.count, rate: rate),
                        duration: nanoseconds(at - x.count, rate: rate),
                        text: "ACC samples lost"))
                let count = at - x.count
                x.append(contentsOf: repeatElement(x.last ?? sample.x, count: count))
                y.append(contentsOf: repeatElement(y.last ?? sample.y, count: count))
                z.append(contentsOf: repeatElement(z.last ?? sample.z, count: count))
            }
            x.append(sample.x)
            y.append(sample.y)
            z.append(sample.z)
        }
        return ((x, y, z), lost)
    }

    /// The ECG slots of the R peaks: each of `beats` at the received sample nearest its time
    /// (within half a period: a beat of another stretch, or in a loss, has none), or without
    /// beats, the peaks `RPeakDetector` finds, run afresh after each loss.
    static func peakSlots(_ ecg: SensorStretch.Run<PMDECGSample>, beats: [RecordedStreams.Beat]) -> [Int] {
        let half = Int64(500_000_000 / max(ecg.rate, 1))
        var times: [Int64] = []
        if beats.isEmpty {
            var detector = RPeakDetector(sampleRate: Double(ecg.rate))
            var previous: Int? = nil
            for (sample, slot) in zip(ecg.samples, ecg.slots) {
                if let previous, slot > previous + 1 {
                    times += detector.finish().map(\.time)
                    detector.reset()
                }
                previous = slot
                if let peak = detector.process(
                    Double(sample.microvolts), time: Int64(clamping: sample.timestamp))
                {
                    times.append(peak.time)
                }
            }
            times += detector.finish().map(\.time)
        } else {
            times = beats.map(\.sensorNanoseconds)
        }
        var slots: [Int] = []
        for time in times {
            // The first sample at or after `time`, and the one before it.
            var low = 0
            var high = ecg.samples.count
            while low < high {
                let middle = (low + high) / 2
                if Int64(clamping: ecg.samples[middle].timestamp) < time {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            var best: Int? = nil
            for candidate in [low - 1, low] where candidate >= 0 && candidate < ecg.samples.count {
                let distance = abs(Int64(clamping: ecg.samples[candidate].timestamp) &- time)
                guard distance <= half else { continue }
                if let chosen = best,
                    abs(Int64(clamping: ecg.samples[chosen].timestamp) &- time) <= distance
                {
                    continue
                }
                best = candidate
            }
            if let best, slots.last != ecg.slots[best] { slots.append(ecg.slots[best]) }
        }
        return slots
    }

    // MARK: - CSV

    /// `sensor_ns,time,uv`: a row per ECG sample received (lost ones have none), in order.
    package static let ecgHeader = "sensor_ns,time,uv"
    /// `sensor_ns,time,x_mg,y_mg,z_mg`: a row per acceleration sample received.
    package static let accHeader = "sensor_ns,time,x_mg,y_mg,z_mg"

    /// The ECG CSV's text, nil when the stretches hold no ECG.
    package static func ecgCSV(_ decoded: SensorStretches.Decoded) -> String? {
        var text = ecgHeader + "\n"
        var any = false
        var clock = ISOClock()
        for stretch in decoded.stretches {
            guard let ecg = stretch.ecg else { continue }
            any = true
            for sample in ecg.samples {
                text += "\(sample.timestamp),"
                clock.append(stretch.wall(sample.timestamp), to: &text)
                text += ",\(sample.microvolts)\n"
            }
        }
        return any ? text : nil
    }

    /// The acceleration CSV's text, nil when the stretches hold none.
    package static func accCSV(_ decoded: SensorStretches.Decoded) -> String? {
        var text = accHeader + "\n"
        var any = false
        var clock = ISOClock()
        for stretch in decoded.stretches {
            guard let acc = stretch.acc else { continue }
            any = true
            for sample in acc.samples {
                text += "\(sample.timestamp),"
                clock.append(stretch.wall(sample.timestamp), to: &text)
                text += ",\(sample.x),\(sample.y),\(sample.z)\n"
            }
        }
        return any ? text : nil
    }

    /// `2026-11-26T07:00:01.123456Z`: UTC to the microsecond (truncated) from nanoseconds since
    /// the Unix epoch.
    package static func isoTime(_ unixNanoseconds: Int64) -> String {
        let time = EDFDateTime(unixNanoseconds: unixNanoseconds)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        return
            "\(pad(time.year, 4))-\(pad(time.month, 2))-\(pad(time.day, 2))T\(pad(time.hour, 2)):\(pad(time.minute, 2)):\(pad(time.second, 2)).\(pad(time.nanosecond / 1000, 6))Z"
    }
}

/// `StreamExport.isoTime` for times in order: the date and time of day made once per second, only
/// the microseconds after it for each sample (a CSV has hundreds of rows a second).
struct ISOClock {
    private var second: Int64? = nil
    private var prefix = ""

    /// Appends `unixNanoseconds`'s `isoTime` to `text`.
    mutating func append(_ unixNanoseconds: Int64, to text: inout String) {
        let whole =
            unixNanoseconds >= 0 ? unixNanoseconds / 1_000_000_000 : (unixNanoseconds + 1) / 1_000_000_000 - 1
        if whole != second {
            second = whole
            // "2026-11-26T07:00:01." of "2026-11-26T07:00:01.000000Z".
            prefix = String(StreamExport.isoTime(whole * 1_000_000_000).dropLast(7))
        }
        let digits = String((unixNanoseconds - whole * 1_000_000_000) / 1000)
        text += prefix
        text += String(repeating: "0", count: 6 - digits.count)
        text += digits
        text += "Z"
    }
}
