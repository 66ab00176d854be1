package import Monitor

/// What a scored morning reading (`hrm readiness`) found: the last line of its recording, and a
/// row of the library's index (`readings`), from which later readings take their baseline.
package struct ReadinessFigures: Equatable, Sendable {
    /// ln(RMSSD), RMSSD in milliseconds, of the artefact-corrected beats.
    package var lnRMSSD: Double
    package var rmssd: Double
    /// The mean heart rate over the reading (60000 / mean NN), beats per minute.
    package var restingHR: Double
    /// RR intervals the strap sent during the reading, and how many of them the corrector changed
    /// or removed.
    package var beats: Int
    package var correctedBeats: Int
    /// The beats' time: the sum of the RR intervals, in seconds.
    package var seconds: Double

    /// Every stored property, as given.
    package init(
        lnRMSSD: Double, rmssd: Double, restingHR: Double, beats: Int, correctedBeats: Int, seconds: Double
    ) {
        self.lnRMSSD = lnRMSSD
        self.rmssd = rmssd
        self.restingHR = restingHR
        self.beats = beats
        self.correctedBeats = correctedBeats
        self.seconds = seconds
    }
}

extension RecordingLine {
    /// The `readiness` line that ends a reading's recording: the outcome as scored or refused
    /// (`scored`, `refused`), and the figures. Written after the session, so without `mono_ms`.
    package static func readiness(_ outcome: ReadinessScore.Outcome, time: Timestamp) -> String {
        var json = JSONLine(type: "readiness")
        json.add("time", time.description)
        outcome.describe(into: &json)
        return json.line + "\n"
    }
}

extension ReadinessScore.Outcome {
    /// `scored`, `refused` (nil when scored), `beats`, `corrected_beats`, `seconds`, then the
    /// figures (null when refused): the keys a recording's line and `hrm readiness --json` share.
    package func describe(into json: inout JSONLine) {
        let figures: ReadinessFigures?
        if case .scored(let scored) = self { figures = scored } else { figures = nil }
        json.add("scored", figures != nil)
        json.add("refused", refusal?.rawValue)
        json.add("beats", beats)
        json.add("corrected_beats", correctedBeats)
        json.add("seconds", Self.rounded(seconds, 3))
        json.add("ln_rmssd", figures.map { Self.rounded($0.lnRMSSD, 4) })
        json.add("rmssd_ms", figures.map { Self.rounded($0.rmssd, 2) })
        json.add("resting_hr", figures.map { Self.rounded($0.restingHR, 1) })
    }

    static func rounded(_ value: Double, _ places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }
}
