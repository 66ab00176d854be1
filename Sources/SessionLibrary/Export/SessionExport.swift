package import FIT
import HeartRate
import Monitor

/// A recorded session in the forms other programs import.
package enum SessionExport {
    /// One sample per second of connected time: the latest measurement at or before the end of
    /// that second (within the segment); nothing in the gaps between segments, nothing invented
    /// before a segment's first measurement.
    package static func perSecond(_ session: RecordedSession) -> [(time: Int64, bpm: Int)] {
        perSecondMeasurements(session).map {
            ($0.time, Int(session.measurements[$0.measurement].measurement.heartRate))
        }
    }

    /// `perSecond`'s seconds, each with the index in `session.measurements` of its measurement.
    package static func perSecondMeasurements(_ session: RecordedSession) -> [(time: Int64, measurement: Int)]
    {
        var samples: [(time: Int64, measurement: Int)] = []
        var index = 0
        let measurements = session.measurements
        for segment in session.segments {
            var second = segment.lowerBound / 1000 * 1000
            var latest: Int? = nil
            while index < measurements.count, measurements[index].time < second { index += 1 }
            while second <= segment.upperBound {
                while index < measurements.count, measurements[index].time < second + 1000 {
                    latest = index
                    index += 1
                }
                if let latest { samples.append((second, latest)) }
                second += 1000
            }
        }
        return samples
    }

    /// Average and maximum over the measurements with a heart rate (0 is a strap without contact).
    package static func heartRates(_ session: RecordedSession) -> (average: Int?, maximum: Int?) {
        heartRates(of: session.measurements)
    }

    package static func heartRates(of measurements: [RecordedSession.Measurement]) -> (
        average: Int?, maximum: Int?
    ) {
        let rates = measurements.map { Int($0.measurement.heartRate) }.filter { $0 > 0 }
        guard !rates.isEmpty else { return (nil, nil) }
        return ((rates.reduce(0, +) + rates.count / 2) / rates.count, rates.max())
    }

    package static func fit(_ session: RecordedSession, sport: FITActivity.Sport) -> [UInt8] {
        let (average, maximum) = heartRates(session)
        let activity = FITActivity(
            start: session.start,
            samples: perSecond(session).map {
                FITActivity.Sample(time: $0.time, heartRate: UInt8(clamping: $0.bpm))
            },
            rrSeconds: session.measurements.flatMap { $0.measurement.rrIntervals.map(\.seconds) },
            segments: session.segments, sport: sport, averageHeartRate: average.map { UInt8(clamping: $0) },
            maximumHeartRate: maximum.map { UInt8(clamping: $0) })
        return FITEncoder.encode(activity)
    }

    package static func tcx(_ session: RecordedSession, sport: FITActivity.Sport) -> String {
        let (average, maximum) = heartRates(session)
        let connected = session.segments.reduce(0.0) { $0 + Double($1.upperBound - $1.lowerBound) / 1000 }
        let tcxSport =
            switch sport {
            case .running: "Running"
            case .cycling, .eBiking: "Biking"
            default: "Other"
            }
        return TCXWriter.document(
            TCXActivity(
                start: session.start, sport: tcxSport,
                trackpoints: perSecond(session).map { TCXActivity.Trackpoint(time: $0.time, bpm: $0.bpm) },
                totalSeconds: connected, averageBPM: average, maximumBPM: maximum,
                notes: session.name.map { "Recorded by hrm from \($0)" }))
    }

    /// The rows `watch --csv` printed.
    package static func csv(_ session: RecordedSession) -> [String] {
        [MeasurementCSV.header]
            + session.measurements.compactMap {
                MeasurementCSV.row(
                    MonitorEvent(
                        time: Timestamp(millisecondsSinceEpoch: $0.time), device: $0.device,
                        kind: .measurement($0.measurement, zone: $0.zone)))
            }
    }

    /// The lines `watch --json` printed: the recording's lines less `mono_ms` and `hex`, which
    /// only a recording has (each added in one known place, so taken out as written: `mono_ms`
    /// after `time`, a measurement's `hex` last; an error line's `hex` is watch's own and stays).
    package static func json(_ session: RecordedSession) -> [String] {
        session.lines.map { line in
            var text = Substring(line)
            if let key = text.firstRange(of: ",\"mono_ms\":") {
                let rest = text[key.upperBound...]
                let end = rest.firstIndex(where: { $0 == "," || $0 == "}" }) ?? rest.endIndex
                text = text[..<key.lowerBound] + text[end...]
            }
            if text.hasPrefix("{\"type\":\"measurement\""), let key = text.ranges(of: ",\"hex\":\"").last {
                text = text[..<key.lowerBound] + "}"
            }
            return String(text)
        }
    }
}
