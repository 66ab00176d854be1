import Monitor
import SessionLibrary

/// `hrm readiness`' result: a few lines for people, or one JSON object. Only formats: the
/// figures, baseline and verdicts come from `ReadinessScore` and `ReadinessBaseline`.
enum ReadinessOutput {
    /// The verdict in words.
    static func words(_ verdict: ReadinessBaseline.Verdict) -> String {
        switch verdict {
        case .within: "within your normal range"
        case .lower: "lower than usual"
        case .higher: "higher than usual"
        }
    }

    /// The lines of a scored reading taken at `time`. ln RMSSD has three decimals: with two, a
    /// value just below its band's low end would read as that end.
    static func text(_ figures: ReadinessFigures, baseline: ReadinessBaseline, time: Timestamp) -> [String] {
        let share = percent(figures.correctedBeats, of: figures.beats)
        var lines = [
            "Readiness \(date(time)): \(elapsed(figures.seconds)) of beats, \(figures.beats) beats, "
                + "\(figures.correctedBeats) corrected (\(share) %)"
        ]
        let ln =
            "ln RMSSD    " + pad(fixed(figures.lnRMSSD, 3) + " (RMSSD " + fixed(figures.rmssd, 1) + " ms)")
        let resting = "resting HR  " + pad(fixed(figures.restingHR, 1) + " bpm")
        guard let lnBand = baseline.lnRMSSD, let restingBand = baseline.restingHR else {
            lines.append(ln.trimmingTrailingSpaces)
            lines.append(resting.trimmingTrailingSpaces)
            let count = baseline.readings7Days
            lines.append(
                "baseline    still being built: \(count) earlier reading\(count == 1 ? "" : "s") in the last 7 days, "
                    + "\(ReadinessBaseline.minimumReadings) needed (a reading each morning adds one)")
            return lines
        }
        lines.append(ln + band(lnBand, figures.lnRMSSD, places: 3))
        lines.append(resting + band(restingBand, figures.restingHR, places: 1))
        let week = baseline.readings7Days
        let month = baseline.readings30Days
        lines.append(
            "baseline    \(week) reading\(week == 1 ? "" : "s") in the last 7 days (their mean), "
                + "\(month) in the last 30 (±1 SD)")
        return lines
    }

    private static func band(_ band: ReadinessBaseline.Band, _ value: Double, places: Int) -> String {
        "  " + words(band.verdict(value)) + " (7-day mean " + fixed(band.mean, places) + ", normal "
            + fixed(band.low, places) + " to " + fixed(band.high, places) + ")"
    }

    /// Why a reading was not scored, for stderr.
    static func refusal(_ outcome: ReadinessScore.Outcome, wanted: Double) -> String {
        let beats = outcome.beats
        let corrected = outcome.correctedBeats
        switch outcome.refusal {
        case .artefacts:
            return
                "not scored: \(corrected) of \(beats) beats (\(percent(corrected, of: beats)) %) had to be corrected, "
                + "more than 5 %: the figures would say more about the corrections than about you. Check that the "
                + "strap's electrodes are wet and it sits snugly, lie still, and take the reading again"
        case .tooFewBeats:
            return
                "not scored: too few beats: \(beats) over \(elapsed(outcome.seconds)) of the "
                + "\(ReadinessProgress.clock(wanted)) asked for (a reading needs \(ReadinessScore.minimumBeats) beats "
                + "or more, covering 90 % of --duration); a strap that sends no RR intervals cannot be read"
        case .noVariability:
            return "not scored: the \(beats) beats do not vary at all (RMSSD 0): not a heart's rhythm"
        case nil:
            return ""
        }
    }

    /// The one JSON object: the reading's keys as its recording's line has them, then the
    /// baseline and the verdicts (null while the baseline is built or when not scored), then
    /// the recording's path.
    static func json(
        _ outcome: ReadinessScore.Outcome, baseline: ReadinessBaseline?, time: Timestamp, path: String?
    ) -> String {
        var json = JSONLine(type: "readiness")
        json.add("time", time.description)
        outcome.describe(into: &json)
        json.add("baseline", baseline.map { $0.isBuilt ? "built" : "building" })
        json.add("baseline_readings_7d", baseline?.readings7Days)
        json.add("baseline_readings_30d", baseline?.readings30Days)
        var figures: ReadinessFigures? = nil
        if case .scored(let scored) = outcome { figures = scored }
        for (name, band, value, places) in [
            ("ln_rmssd", baseline?.lnRMSSD, figures?.lnRMSSD, 4),
            ("resting_hr", baseline?.restingHR, figures?.restingHR, 2),
        ] {
            json.add(JSONLine.Key("\(name)_mean_7d"), band.map { round($0.mean, places) })
            json.add(JSONLine.Key("\(name)_sd_30d"), band.map { round($0.deviation, places) })
            json.add(JSONLine.Key("\(name)_low"), band.map { round($0.low, places) })
            json.add(JSONLine.Key("\(name)_high"), band.map { round($0.high, places) })
            let verdict: String? =
                if let band, let value { band.verdict(value).rawValue } else { nil }
            json.add(JSONLine.Key("\(name)_verdict"), verdict)
        }
        json.add("path", path)
        return json.line
    }

    static func round(_ value: Double, _ places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    /// `3.91`: `places` decimals, always shown.
    static func fixed(_ value: Double, _ places: Int) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        let fraction = String(scaled % scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard places > 0 else { return sign + String(scaled) }
        return sign + String(scaled / scale) + "." + String(repeating: "0", count: places - fraction.count)
            + fraction
    }

    /// `2:00`: whole seconds, to the nearest.
    static func elapsed(_ seconds: Double) -> String {
        ReadinessProgress.clock(seconds.rounded(.down) + (seconds - seconds.rounded(.down) >= 0.5 ? 1 : 0))
    }

    static func percent(_ part: Int, of whole: Int) -> String {
        fixed(whole == 0 ? 0 : Double(part) * 100 / Double(whole), 1)
    }

    private static func pad(_ text: String) -> String {
        text.count >= 23 ? text : text + String(repeating: " ", count: 23 - text.count)
    }

    /// `2026-11-26 07:12 UTC`.
    static func date(_ time: Timestamp) -> String {
        let text = time.description
        guard text.count >= 16 else { return text }
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + " UTC"
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
