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
        /// Whose RR intervals: the strap's own (in its measurements), or those between the R
        /// peaks hrm finds in its ECG (`--rr-source ecg`, with `--ecg`).
        package var source: RRSource = .strap

        /// Every stored property, as given.
        package init(
            every: Double? = 5, window: Double = 60, correcting: Bool = true, source: RRSource = .strap
        ) {
            self.every = every
            self.window = window
            self.correcting = correcting
            self.source = source
        }
    }

    /// Where HRV's RR intervals come from.
    package enum RRSource: String, Sendable, Equatable, CaseIterable {
        /// The strap's measurements.
        case strap
        /// The R peaks found in the strap's ECG.
        case ecg
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
        track(event, emit: emit)
    }

    /// `process`'s work after the event went on. Out of line: its frame (3 KB: a strap's
    /// default, the window's metrics, the `hrv` event) was live under every later stage and the
    /// sinks, which ran inside `process`'s `emit`; a notification's stack spread over a page more.
    @inline(never)
    private func track(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        let device = event.device ?? ""
        switch event.kind {
        case .ecgBeat(let beat) where settings.source == .ecg:
            guard let rr = beat.rrMilliseconds else {
                // A first peak (after a start, a reconnect or lost samples): a new run of beats.
                if straps[device] != nil { straps[device, default: Strap(settings)].endRun() }
                return
            }
            let metrics = straps.update(device, default: Strap(settings)) {
                $0.add(milliseconds: rr, at: event.time.millisecondsSinceEpoch, every: settings.every)
            }
            if let metrics {
                let artefacts = straps[device]?.session.metrics().artefacts ?? 0
                emit(event.followedBy(.hrv(metrics, sessionArtefacts: artefacts)))
            }
        case .measurement(let m, _) where !m.rrIntervals.isEmpty && settings.source == .strap:
            // In place (its default made only when missing): a copy would copy the window's beats
            // per notification.
            let metrics = straps.update(device, default: Strap(settings)) {
                $0.add(m.rrIntervals, at: event.time.millisecondsSinceEpoch, every: settings.every)
            }
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
        return report(at: now, every: every)
    }

    /// Takes one RR interval in milliseconds (from the ECG), as `add(_:at:every:)` does.
    package mutating func add(milliseconds: Double, at now: Int64, every: Double?) -> HRVMetrics? {
        corrector.append(milliseconds, into: &decided)
        return report(at: now, every: every)
    }

    /// The corrector's decided beats into the window and the session; the metrics when due.
    private mutating func report(at now: Int64, every: Double?) -> HRVMetrics? {
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
