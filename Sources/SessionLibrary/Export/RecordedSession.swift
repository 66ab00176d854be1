package import HeartRate
import Monitor

#if canImport(Glibc)
    import Glibc
#endif

/// A recording read back (format 1): what the exports are made of. The raw payloads are the
/// truth: measurements are decoded again from their `hex`.
package struct RecordedSession {
    package struct Measurement {
        /// Milliseconds since the epoch.
        package let time: Int64
        package let measurement: HeartRateMeasurement
        package let zone: Int?
        package let device: String?
    }

    /// The header's start, milliseconds since the epoch.
    package var start: Int64 = 0
    /// The time of the last line read.
    package var end: Int64 = 0
    /// The strap's name, from its first `info` line that gives one.
    package var name: String? = nil
    /// The strap's address, from the first line that names one.
    package var device: String? = nil
    /// Every strap the recording names, in the order it first does (with `only`, too): a recording
    /// of `watch --all` holds several, one line after another's.
    package var straps: [StrapChoice.Strap] = []
    package var measurements: [Measurement] = []
    /// Connected periods, in order.
    package var segments: [ClosedRange<Int64>] = []
    /// Every line but the header, as written (for `--format json`).
    package var lines: [String] = []
    /// What was odd but not fatal: a torn last line.
    package var warnings: [String] = []
    /// Where a strap's link dropped or the session stopped (a `status` line `disconnected` or
    /// `stopped`, as `hrm hrv` cuts its runs): before the measurement at `before`, of `device`
    /// (nil: every strap's).
    package var gaps: [(before: Int, device: String?)] = []
    /// A scored morning reading's figures (`hrm readiness`): its recording's `readiness` line,
    /// when that line has them.
    package var readiness: ReadinessFigures? = nil
    /// The PMD streams' lines (`pmd`, `ecg_beat`, and the `status` lines that cut them), read only
    /// with `readingStreams`: empty otherwise.
    package var streams = RecordedStreams()

    /// Why a recording cannot be read: the line, and what is wrong with it.
    package struct Unreadable: Error, CustomStringConvertible {
        package let description: String
        /// A recording's header of a format this hrm does not know (a newer hrm's), with the start
        /// it gives (nil when it gives none that reads).
        package var newerFormat: (format: Int, start: Int64?)? = nil
    }

    /// The recording, or with `only` one strap of it: the lines of the others left out (those that
    /// name none, such as the last `stopped`, kept), so it reads as a recording of that strap alone.
    /// `keepingLines` false leaves `lines` empty (only `--format json` needs them); `readingStreams`
    /// fills `streams` (the EDF+ and CSV exports, `hrm hrv --rr-source ecg`).
    package init(
        text: String, source: String, only: String? = nil, keepingLines: Bool = true,
        readingStreams: Bool = false
    )
        throws(Unreadable)
    {
        var text = text
        var failure: Unreadable? = nil
        text.withUTF8 { buffer in
            do throws(Unreadable) {
                try read(
                    UnsafeRawBufferPointer(buffer), source: source, only: only, keepingLines: keepingLines,
                    readingStreams: readingStreams)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// The non-empty lines of `bytes`, split at each newline byte.
    private static func lines(of bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        var lines: [Range<Int>] = []
        guard let base = bytes.baseAddress else { return lines }
        var start = 0
        while start < bytes.count {
            let end =
                memchr(base + start, 0x0A, bytes.count - start).map { UnsafeRawPointer($0) - base }
                ?? bytes.count
            if end > start { lines.append(start..<end) }
            start = end + 1
        }
        return lines
    }

    private mutating func read(
        _ bytes: UnsafeRawBufferPointer, source: String, only: String?, keepingLines: Bool,
        readingStreams: Bool
    )
        throws(Unreadable)
    {
        let lines = Self.lines(of: bytes)
        var connectedSince: Int64? = nil
        var last: Int64 = 0
        var names: [String: String] = [:]
        var named: Set<String> = []
        var devices = DeviceNames()
        var line = RecordingLineFields()
        // A measurement a line, nearly: the array grows once or twice, not forty times.
        measurements.reserveCapacity(lines.count)
        for (index, range) in lines.enumerated() {
            let number = index + 1
            let lineBytes = UnsafeRawBufferPointer(rebasing: bytes[range])
            guard line.read(lineBytes), let type = line.type else {
                if number == lines.count, number > 1 {
                    warnings.append(
                        "\(source), line \(number): a torn last line, as a crash leaves it: ignored")
                    break
                }
                if number == 1 { throw Self.notARecording(source) }
                throw Unreadable(description: "\(source), line \(number): not a line of a recording")
            }
            if number == 1 {
                guard type == "recording", line.number("format") == 1,
                    let start = line.milliseconds("start")
                else {
                    var unreadable = Unreadable(
                        description: "\(source) is not an hrm recording of format 1 (see hrm record)")
                    if type == "recording", let format = line.number("format"), format > 1,
                        format < 1_000_000,
                        format == format.rounded()
                    {
                        unreadable.newerFormat = (Int(format), line.milliseconds("start"))
                    }
                    throw unreadable
                }
                self.start = start
                last = start
                continue
            }
            guard let time = line.milliseconds("time") else {
                throw Unreadable(description: "\(source), line \(number): no valid \"time\"")
            }
            let lineDevice = line.device(&devices)
            if let lineDevice {
                if named.insert(lineDevice).inserted { straps.append(.init(device: lineDevice, name: nil)) }
                if type == "info", names[lineDevice] == nil { names[lineDevice] = line.string("name") }
            }
            if let only, let lineDevice, lineDevice != only { continue }
            if keepingLines { self.lines.append(String(decoding: lineBytes, as: UTF8.self)) }
            last = max(last, time)
            end = last
            device = device ?? lineDevice
            switch type {
            case "info":
                // Another strap's name is not this one's.
                if lineDevice == nil || lineDevice == device { name = name ?? line.string("name") }
            case "status":
                let state = line.string("state")
                switch state {
                case "connected":
                    connectedSince = connectedSince ?? time
                case "disconnected", "reconnecting", "stopped":
                    if let since = connectedSince { segments.append(since...max(since, time)) }
                    connectedSince = nil
                    if state != "reconnecting" { gaps.append((measurements.count, lineDevice)) }
                    if readingStreams, let state {
                        streams.items.append(.cut(.init(time: time, device: lineDevice, state: state)))
                    }
                default: break
                }
            case "measurement":
                guard let bytes = line.hexPayload(), let m = try? HeartRateMeasurement(decoding: bytes) else {
                    throw Unreadable(
                        description: "\(source), line \(number): a measurement without a payload that decodes"
                    )
                }
                var zone: Int? = nil
                if let z = line.number("zone"), z >= 0, z < 100 { zone = Int(z) }
                measurements.append(Measurement(time: time, measurement: m, zone: zone, device: lineDevice))
            case "readiness":
                readiness = Self.readiness(line)
            case "pmd" where readingStreams:
                // A frame that does not read is the decoder's to tell (a warning): the rest is kept.
                guard let bytes = line.hexPayload(), let rate = line.number("rate_hz"), rate > 0,
                    rate < 100_000
                else {
                    warnings.append(
                        "\(source), line \(number): a pmd line without a frame and a rate: ignored")
                    continue
                }
                let range = line.number("range_g").flatMap { $0 >= 0 && $0 < 1000 ? Int($0) : nil }
                streams.items.append(
                    .frame(.init(time: time, device: lineDevice, rate: Int(rate), range: range, bytes: bytes))
                )
                streams.frameCount += 1
            case "ecg_beat" where readingStreams:
                guard let sensor = line.integer("sensor_ns") else {
                    warnings.append("\(source), line \(number): an ecg_beat without a sensor_ns: ignored")
                    continue
                }
                streams.items.append(
                    .beat(.init(device: lineDevice, sensorNanoseconds: sensor, rr: line.number("rr_ms"))))
                streams.beatCount += 1
            default: break
            }
        }
        // Nothing at all (an empty file, one of NUL bytes only) is not a recording dated 1970.
        if lines.isEmpty { throw Self.notARecording(source) }
        // A recording cut short (a crash) ends with its last line.
        if let since = connectedSince { segments.append(since...max(since, last)) }
        straps = straps.map { StrapChoice.Strap(device: $0.device, name: names[$0.device]) }
    }

    /// The figures of a scored reading's line (null figures: refused, nil); each must be a
    /// finite number in a range a person's reading can have, else the line is not trusted.
    private static func readiness(_ line: RecordingLineFields) -> ReadinessFigures? {
        guard let ln = line.number("ln_rmssd"), let rmssd = line.number("rmssd_ms"),
            let resting = line.number("resting_hr"), let beats = line.number("beats"),
            let corrected = line.number("corrected_beats"), let seconds = line.number("seconds"),
            ln.isFinite, rmssd > 0, rmssd < 10_000, resting > 0, resting < 400, beats >= 0, beats < 1e9,
            corrected >= 0, corrected <= beats, seconds >= 0, seconds < 1e9
        else { return nil }
        return ReadinessFigures(
            lnRMSSD: ln, rmssd: rmssd, restingHR: resting, beats: Int(beats), correctedBeats: Int(corrected),
            seconds: seconds)
    }

    package static func notARecording(_ source: String) -> Unreadable {
        Unreadable(description: "\(source) is not an hrm recording of format 1 (see hrm record)")
    }

    /// `2026-11-23T15:42:01.123Z` (or without the fraction) as milliseconds since the epoch.
    package static func milliseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { milliseconds(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// `milliseconds(_:)` of the text's UTF-8 bytes.
    package static func milliseconds(bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var millis: Int64 = 0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), let fraction = number(20..<min(bytes.count - 1, 23)) else {
                return nil
            }
            let digits = min(bytes.count - 1, 23) - 20
            millis = fraction * [100, 10, 1][max(min(digits, 3), 1) - 1]
        }
        // Days from 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }
}
