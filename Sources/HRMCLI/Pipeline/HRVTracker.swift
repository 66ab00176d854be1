import HRV

/// Live HRV per strap: every RR interval through artefact correction into a window of the last
/// `--hrv-window` seconds of beats, and an `hrv` event every `--hrv-every` seconds, sent right
/// after the measurement that brought the window's last beats. It lives for the whole session, so
/// a window survives reconnects; a drop ends a run of beats (no successive difference spans it).
///
/// It also keeps every beat of the session, for the summary's RMSSD and alpha1.
final class HRVTracker: EventProcessor {
    struct Settings: Sendable, Equatable {
        /// Seconds between `hrv` events; nil for none.
        var every: Double? = 5
        /// Seconds of beats in the window.
        var window: Double = 60
        var correcting = true
    }

    fileprivate struct Strap {
        var corrector: ArtefactCorrector
        var window: HRVWindow
        var session = HRVWindow(seconds: nil)
        /// When the last `hrv` event went out (or the first beat came), in ms since the epoch.
        var lastReport: Int64? = nil
    }

    let settings: Settings
    private var straps: [String: Strap] = [:]

    init(settings: Settings) {
        self.settings = settings
    }

    func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        emit(event)
        let device = event.device ?? ""
        switch event.kind {
        case .measurement(let m, _) where !m.rrIntervals.isEmpty:
            var strap =
                straps[device]
                ?? Strap(
                    corrector: ArtefactCorrector(correcting: settings.correcting),
                    window: HRVWindow(seconds: settings.window))
            for rr in m.rrIntervals {
                strap.add(strap.corrector.append(rr.milliseconds))
            }
            let now = event.time.millisecondsSinceEpoch
            let due = settings.every.map { now - (strap.lastReport ?? now) >= Int64($0 * 1000) } ?? false
            if strap.lastReport == nil || due { strap.lastReport = now }
            straps[device] = strap
            if due {
                let metrics = strap.window.metrics(adding: strap.corrector.provisional, alpha1: true)
                emit(MonitorEvent(time: event.time, device: event.device, kind: .hrv(metrics)))
            }
        case .status(.disconnected, _), .status(.reconnecting, _):
            straps[device]?.endRun()
        default:
            break
        }
    }

    /// HRV over every beat the strap sent in this session; nil before its first RR interval.
    func session(of device: String?) -> HRVMetrics? {
        guard let strap = straps[device ?? ""] else { return nil }
        return strap.session.metrics(adding: strap.corrector.provisional, alpha1: true)
    }
}

extension HRVTracker.Strap {
    mutating func add(_ beats: [NNInterval]) {
        window.append(contentsOf: beats)
        session.append(contentsOf: beats)
    }

    mutating func endRun() {
        add(corrector.endRun())
    }
}
