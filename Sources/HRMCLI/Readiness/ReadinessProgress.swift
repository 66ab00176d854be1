import Monitor

/// What `hrm readiness` says on stderr while it reads: that it looks for the strap, then, once
/// connected, to lie still; then a countdown of the reading's beat time. On a terminal the
/// countdown is one line redrawn in place; elsewhere a line every 30 s.
struct ReadinessProgress: EventRenderer {
    /// A terminal that redraws in place.
    let live: Bool
    /// The reading's length and how far it has got.
    let collector: ReadingCollector
    private var told = false
    private var drawn = false
    /// Non-live: the last whole 30 s left that was said.
    private var lastSaid: Int? = nil

    init(live: Bool, collector: ReadingCollector) {
        self.live = live
        self.collector = collector
    }

    var redrawsInPlace: Bool { live }

    mutating func render(_ event: MonitorEvent) -> String? {
        switch event.kind {
        case .status(.scanning, _):
            return scroll("hrm readiness: looking for the strap...")
        case .status(.connected, _) where !told:
            told = true
            return scroll(
                "hrm readiness: connected to \(event.device ?? "the strap"). Lie still on your back and breathe "
                    + "normally: the reading takes \(Self.clock(collector.wanted)) of beats, from the first.")
        case .measurement:
            let progress = collector.progress
            guard event.device == progress.device else { return nil }
            // Over: the countdown goes (the beats that come while the strap is let go are not
            // the reading's).
            if progress.ending != nil { return finish() }
            let left = max(collector.wanted - progress.covered / 1000, 0)
            if live { return line(left, bpm: progress.bpm) }
            // At each 30 s of beats left (1:30, 1:00, 0:30), not once the reading is over.
            let step = Int(left / 30)
            guard left > 0, step < lastSaid ?? Int((collector.wanted - 0.001) / 30) else { return nil }
            lastSaid = step
            return "hrm readiness: \(Self.clock(Double(step + 1) * 30)) left\n"
        default:
            return nil
        }
    }

    /// The countdown line, drawn over the last one.
    private mutating func line(_ left: Double, bpm: Int?) -> String {
        drawn = true
        let rate = bpm.map { "  \($0) bpm" } ?? ""
        return "\r\u{1B}[K  \(Self.clock(left)) left\(rate)  lie still"
    }

    /// A line that scrolls: the countdown taken off first, drawn again after.
    private mutating func scroll(_ text: String) -> String {
        let shown = TerminalText.sanitised(text, limit: TerminalText.messageLimit)
        guard live, drawn else { return shown + "\n" }
        drawn = false
        return "\r\u{1B}[K" + shown + "\n"
    }

    mutating func finish() -> String? {
        guard live, drawn else { return nil }
        drawn = false
        return "\r\u{1B}[K"
    }

    mutating func suspend() -> String? {
        live && drawn ? "\r\u{1B}[K" : nil
    }

    mutating func resume() -> String? {
        guard live, drawn, collector.progress.ending == nil else {
            drawn = false
            return nil
        }
        let progress = collector.progress
        return line(max(collector.wanted - progress.covered / 1000, 0), bpm: progress.bpm)
    }

    /// `2:00`, `0:07`: whole seconds, rounded up (a countdown says 0:00 only at the end).
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        let rest = whole % 60
        return "\(whole / 60):" + (rest < 10 ? "0" : "") + String(rest)
    }
}
