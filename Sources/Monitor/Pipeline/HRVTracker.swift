package import HRV
import HeartRate

/// Live HRV per strap: every RR interval through artefact correction into a window of the last
/// `--hrv-window` seconds of beats, and an `hrv` event every `--hrv-every` seconds, sent right
/// after the measurement that brought the window's last beats. It lives for the whole session, so
/// a window survives reconnects; a drop ends a run of beats (no successive difference spans it).
///
/// It also sums every beat of the session, for the summary's RMSSD and alpha1.
package final class HRVTracker: EventProcessor {
    package struct Settings: Sendable, Equatable {
        /// Seconds between `hrv` events; nil for none.
        package var every: Double? = 5
        /// Seconds of beats in the window.
        package var window: Double = 60
        package var correcting: Bool = true

        /// Every stored property, as given.
        package init(every: Double? = 5, window: Double = 60, correcting: Bool = true) {
            self.every = every
            self.window = window
            self.correcting = correcting
        }
    }

    fileprivate struct Strap {
        package var corrector: ArtefactCorrector
        package var window: HRVWindow
        /// Every beat of the session, summed (O(1) memory however long it runs).
        package var session = HRVAccumulator()
        /// When the last `hrv` event went out (or the first beat came), in ms since the epoch.
        package var lastReport: Int64? = nil
        /// The corrector's output, reused from beat to beat (no allocation per beat).
        package var decided: [NNInterval] = []
    }

    package let settings: Settings
    private var straps = DeviceTable<Strap>()

    package init(settings: Settings) {
        self.settings = settings
    }

    package func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        emit(event)
        let device = event.device ?? ""
        switch event.kind {
        case .measurement(let m, _) where !m.rrIntervals.isEmpty:
            // In place (the default subscript's modify, its default made only when missing): a
            // copy would copy the window's beats per notification.
            let metrics = straps[device, default: Strap(settings)].add(
                m.rrIntervals, at: event.time.millisecondsSinceEpoch, every: settings.every)
            if let metrics {
                let artefacts = straps[device]?.session.metrics().artefacts ?? 0
                emit(event.followedBy(.hrv(metrics, sessionArtefacts: artefacts)))
            }
        case .status(.disconnected, _), .status(.reconnecting, _):
            if straps[device] != nil { straps[device, default: Strap(settings)].endRun() }
        default:
            break
        }
    }

    /// HRV over every beat the strap sent in this session; nil before its first RR interval.
    package func session(of device: String?) -> HRVMetrics? {
        guard let strap = straps[device ?? ""] else { return nil }
        return strap.session.metrics(adding: strap.corrector.provisional)
    }
}

extension HRVTracker.Strap {
    package init(_ settings: HRVTracker.Settings) {
        corrector = ArtefactCorrector(correcting: settings.correcting)
        window = HRVWindow(seconds: settings.window)
    }

    /// Takes a measurement's RR intervals, received at `now` (ms); returns the window's metrics
    /// when an `hrv` event is due.
    package mutating func add(_ intervals: RRIntervals, at now: Int64, every: Double?) -> HRVMetrics? {
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

    package mutating func add(_ beats: [NNInterval]) {
        window.append(contentsOf: beats)
        session.append(contentsOf: beats)
    }

    package mutating func endRun() {
        add(corrector.endRun())
    }
}
