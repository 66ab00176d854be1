import HRV
import HeartRate

/// Live HRV per strap: every RR interval through artefact correction into a window of the last
/// `--hrv-window` seconds of beats, and an `hrv` event every `--hrv-every` seconds, sent right
/// after the measurement that brought the window's last beats. It lives for the whole session, so
/// a window survives reconnects; a drop ends a run of beats (no successive difference spans it).
///
/// It also sums every beat of the session, for the summary's RMSSD and alpha1.
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
        /// Every beat of the session, summed (O(1) memory however long it runs).
        var session = HRVAccumulator()
        /// When the last `hrv` event went out (or the first beat came), in ms since the epoch.
        var lastReport: Int64? = nil
        /// The corrector's output, reused from beat to beat (no allocation per beat).
        var decided: [NNInterval] = []
    }

    let settings: Settings
    private var straps = DeviceTable<Strap>()

    init(settings: Settings) {
        self.settings = settings
    }

    func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        emit(event)
        let device = event.device ?? ""
        switch event.kind {
        case .measurement(let m, _) where !m.rrIntervals.isEmpty:
            // In place (the default subscript's modify, its default made only when missing): a
            // copy would copy the window's beats per notification.
            let metrics = straps[device, default: Strap(settings)].add(
                m.rrIntervals, at: event.time.millisecondsSinceEpoch, every: settings.every)
            if let metrics { emit(event.followedBy(.hrv(metrics))) }
        case .status(.disconnected, _), .status(.reconnecting, _):
            if straps[device] != nil { straps[device, default: Strap(settings)].endRun() }
        default:
            break
        }
    }

    /// HRV over every beat the strap sent in this session; nil before its first RR interval.
    func session(of device: String?) -> HRVMetrics? {
        guard let strap = straps[device ?? ""] else { return nil }
        return strap.session.metrics(adding: strap.corrector.provisional)
    }
}

extension HRVTracker.Strap {
    init(_ settings: HRVTracker.Settings) {
        corrector = ArtefactCorrector(correcting: settings.correcting)
        window = HRVWindow(seconds: settings.window)
    }

    /// Takes a measurement's RR intervals, received at `now` (ms); returns the window's metrics
    /// when an `hrv` event is due.
    mutating func add(_ intervals: RRIntervals, at now: Int64, every: Double?) -> HRVMetrics? {
        // By index and one beat at a time: the generic Sequence paths across the module boundary
        // cost an iterator and witness calls per beat.
        for index in intervals.indices { corrector.append(intervals[index].milliseconds, into: &decided) }
        for beat in decided {
            window.append(beat)
            session.append(beat)
        }
        decided.removeAll(keepingCapacity: true)
        let due = every.map { now - (lastReport ?? now) >= Int64($0 * 1000) } ?? false
        if lastReport == nil || due { lastReport = now }
        return due ? window.metrics(adding: corrector.provisional, alpha1: true) : nil
    }

    mutating func add(_ beats: [NNInterval]) {
        window.append(contentsOf: beats)
        session.append(contentsOf: beats)
    }

    mutating func endRun() {
        add(corrector.endRun())
    }
}
