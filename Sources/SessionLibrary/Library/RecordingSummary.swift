package import HRV
import HeartRate
import Monitor

/// What the session library keeps of one recording: what `hrm sessions` prints of it, and each
/// strap's figures for trends. Computed once from the file (by the code `hrm export` and `hrm
/// hrv` use), then read from the index.
package struct RecordingSummary: Equatable, Sendable {
    /// The header's start and the last line's time, milliseconds since the epoch.
    package var start: Int64
    package var end: Int64
    /// Seconds connected, over every segment.
    package var connectedSeconds: Double
    /// The strap `hrm sessions` shows: the first of several (its measurements only), else the
    /// recording's one (all of them).
    package var device: String?
    package var name: String?
    /// Every strap's address, in the order the recording first names them.
    package var devices: [String]
    /// The measurements of the strap shown, and its heart rates (0 bpm left out).
    package var measurements: Int
    package var averageBPM: Int?
    package var maximumBPM: Int?
    /// Each strap's figures, in `devices`' order.
    package var straps: [StrapFigures]
    /// A scored morning reading's figures (a recording of `hrm readiness`), or nil.
    package var readiness: ReadinessFigures? = nil

    /// Seconds from start to the last line, as `hrm sessions` shows it.
    package var durationSeconds: Double { Double(max(end - start, 0)) / 1000 }

    /// The figures of one strap of a recording.
    package struct StrapFigures: Equatable, Sendable {
        package var address: String
        package var name: String?
        package var measurements: Int
        package var minimumBPM: Int?
        package var averageBPM: Int?
        package var maximumBPM: Int?
        /// Seconds this strap was connected.
        package var connectedSeconds: Double
        /// `hrm hrv --device ADDRESS` over the recording (artefact correction on): nil without RR
        /// intervals, or with one `hrm hrv` refuses (out of range).
        package var hrv: HRVMetrics?
        /// The lowest mean heart rate over 5 minutes of per-second samples (0 bpm left out); nil
        /// below 5 minutes.
        package var restingBPM: Double?
        /// Seconds of per-second samples in each zone the recording gave (zone number → seconds).
        package var zoneSeconds: [Int: Int]

        /// Every stored property, as given.
        package init(
            address: String, name: String?, measurements: Int, minimumBPM: Int?, averageBPM: Int?,
            maximumBPM: Int?, connectedSeconds: Double, hrv: HRVMetrics?, restingBPM: Double?,
            zoneSeconds: [Int: Int]
        ) {
            self.address = address
            self.name = name
            self.measurements = measurements
            self.minimumBPM = minimumBPM
            self.averageBPM = averageBPM
            self.maximumBPM = maximumBPM
            self.connectedSeconds = connectedSeconds
            self.hrv = hrv
            self.restingBPM = restingBPM
            self.zoneSeconds = zoneSeconds
        }
    }

    /// Every stored property, as given.
    package init(
        start: Int64, end: Int64, connectedSeconds: Double, device: String?, name: String?, devices: [String],
        measurements: Int, averageBPM: Int?, maximumBPM: Int?, straps: [StrapFigures],
        readiness: ReadinessFigures? = nil
    ) {
        self.start = start
        self.end = end
        self.connectedSeconds = connectedSeconds
        self.device = device
        self.name = name
        self.devices = devices
        self.measurements = measurements
        self.averageBPM = averageBPM
        self.maximumBPM = maximumBPM
        self.straps = straps
        self.readiness = readiness
    }

    /// The summary of `session`, whose `text` is read again with `only` for each strap of a
    /// recording of several (their segments are their own).
    package init(_ session: RecordedSession, text: String, source: String) {
        start = session.start
        end = session.end
        readiness = session.readiness
        connectedSeconds = Self.connected(session)
        devices = session.straps.map(\.device)
        let shown: [RecordedSession.Measurement]
        if session.straps.count > 1 {
            // The interleaved heart rates of several straps average to nobody's.
            let first = session.straps[0]
            device = first.device
            name = first.name
            shown = session.measurements.filter { $0.device == first.device }
        } else {
            device = session.device
            name = session.name
            shown = session.measurements
        }
        measurements = shown.count
        (averageBPM, maximumBPM) = SessionExport.heartRates(of: shown)
        straps = session.straps.map { strap in
            let own: RecordedSession
            if session.straps.count > 1,
                let alone = try? RecordedSession(
                    text: text, source: source, only: strap.device, keepingLines: false)
            {
                own = alone
            } else {
                own = session
            }
            return Self.figures(of: strap, in: own, gapsFrom: session)
        }
    }

    /// One strap's figures: heart rates and zones from `own` (the recording of it alone), HRV
    /// from its RR intervals in `whole` cut at its gaps, as `hrm hrv --device` reads them.
    static func figures(of strap: StrapChoice.Strap, in own: RecordedSession, gapsFrom whole: RecordedSession)
        -> StrapFigures
    {
        let mine = own.measurements.filter { $0.device == strap.device }
        let rates = mine.map { Int($0.measurement.heartRate) }.filter { $0 > 0 }
        let (average, maximum) = SessionExport.heartRates(of: mine)
        var zones: [Int: Int] = [:]
        var samples: [Int] = []
        for sample in SessionExport.perSecondMeasurements(own) {
            let measurement = own.measurements[sample.measurement]
            guard measurement.device == strap.device else { continue }
            let bpm = Int(measurement.measurement.heartRate)
            if bpm > 0 { samples.append(bpm) }
            if let zone = measurement.zone { zones[zone, default: 0] += 1 }
        }
        return StrapFigures(
            address: strap.device, name: strap.name, measurements: mine.count, minimumBPM: rates.min(),
            averageBPM: average, maximumBPM: maximum, connectedSeconds: connected(own),
            hrv: hrv(of: strap.device, in: whole), restingBPM: lowestMean(samples, over: 300),
            zoneSeconds: zones)
    }

    static func connected(_ session: RecordedSession) -> Double {
        session.segments.reduce(0.0) { $0 + Double($1.upperBound - $1.lowerBound) / 1000 }
    }

    /// `hrm hrv --device device`'s figures: the strap's RR intervals in runs cut at its gaps (and
    /// at the gaps that name no strap), each run corrected on its own; nil without RR intervals
    /// or with one out of `hrm hrv`'s range, which it refuses.
    static func hrv(of device: String, in session: RecordedSession) -> HRVMetrics? {
        var runs: [[Double]] = []
        var current: [Double] = []
        var gap = 0
        let gaps = session.gaps
        func endRun() {
            if !current.isEmpty { runs.append(current) }
            current = []
        }
        for (index, measurement) in session.measurements.enumerated() {
            while gap < gaps.count, gaps[gap].before <= index {
                if gaps[gap].device == nil || gaps[gap].device == device { endRun() }
                gap += 1
            }
            guard measurement.device == device else { continue }
            for rr in measurement.measurement.rrIntervals {
                let milliseconds = rr.milliseconds
                guard milliseconds > 0, milliseconds < 5000 else { return nil }
                current.append(milliseconds)
            }
        }
        endRun()
        var beats: [NNInterval] = []
        for run in runs { beats += HRV.correct(rr: run) }
        guard !beats.isEmpty else { return nil }
        return HRV.metrics(of: beats)
    }

    /// The lowest mean of `window` consecutive samples, to 0.1; nil with fewer samples.
    static func lowestMean(_ samples: [Int], over window: Int) -> Double? {
        guard samples.count >= window, window > 0 else { return nil }
        var sum = samples[0..<window].reduce(0, +)
        var lowest = sum
        for index in window..<samples.count {
            sum += samples[index] - samples[index - window]
            lowest = min(lowest, sum)
        }
        return (Double(lowest) / Double(window) * 10).rounded() / 10
    }
}
