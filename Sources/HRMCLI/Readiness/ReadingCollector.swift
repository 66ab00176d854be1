import Monitor
import Synchronization

/// The beats of a morning reading as they come: the RR intervals of the strap watched, until
/// they cover the time asked for (beat time: the sum of the intervals, which on a strap that
/// sends every beat is the time that passed, and which a simulator playing faster also plays
/// faster). Then it stops the session. It also stops it when the link drops (a reading is lying
/// still with the strap on: a drop spoils it) and, as a last resort, when the wall clock has
/// run well past the reading's length (a strap that sends no RR intervals).
final class ReadingCollector: Sendable {
    /// How the reading ended.
    enum Ending: Sendable, Equatable {
        /// The beats covered the time asked for.
        case complete
        /// The link dropped first.
        case dropped
        /// The wall clock ran past the reading's length and its allowance.
        case timedOut
    }

    /// What the reading has so far.
    struct Progress: Sendable {
        /// The strap whose beats count: the first to send a measurement.
        var device: String? = nil
        /// Each strap's name, from its `info` line.
        var names: [String: String] = [:]
        /// The strap's name, when its `info` line gave one.
        var name: String? { device.flatMap { names[$0] } }
        /// RR intervals, milliseconds, in order.
        var rr: [Double] = []
        /// Their sum, milliseconds.
        var covered: Double = 0
        /// The latest heart rate the strap sent.
        var bpm: Int? = nil
        var ending: Ending? = nil
    }

    /// The reading's length, seconds of beats.
    let wanted: Double
    private let state = Mutex(Progress())

    init(wanted: Double) {
        self.wanted = wanted
    }

    /// What the reading has so far.
    var progress: Progress { state.withLock { $0 } }

    /// Takes `event`; true when it ended the reading (the caller stops the session).
    func take(_ event: MonitorEvent) -> Bool {
        state.withLock { progress in
            guard progress.ending == nil else { return false }
            switch event.kind {
            case .info(let name, _, _, _, _, _):
                if let device = event.device, let name { progress.names[device] = name }
            case .measurement(let measurement, _):
                guard let device = event.device else { return false }
                if progress.device == nil { progress.device = device }
                guard device == progress.device else { return false }
                progress.bpm = Int(measurement.heartRate)
                // The beats up to the reading's length: a frame may carry several, and those
                // after the end are not the reading's.
                for interval in measurement.rrIntervals {
                    progress.rr.append(interval.milliseconds)
                    progress.covered += interval.milliseconds
                    if progress.covered >= wanted * 1000 {
                        progress.ending = .complete
                        return true
                    }
                }
            case .status(.disconnected, _), .status(.reconnecting, _):
                guard progress.device != nil, event.device == progress.device else {
                    return false
                }
                progress.ending = .dropped
                return true
            default:
                break
            }
            return false
        }
    }

    /// The wall clock ran out: the reading ends with what it has, unless it ended already.
    func timedOut() -> Bool {
        state.withLock { progress in
            guard progress.ending == nil else { return false }
            progress.ending = .timedOut
            return true
        }
    }

    /// Whether the reading has begun: a measurement of its strap came.
    var started: Bool { state.withLock { $0.device != nil } }
}

/// The collector as an output of the session: immediate (it only appends under its lock), and
/// the one that stops the session when the reading is over.
struct ReadingCollectorOutput: OutputProvider {
    let collector: ReadingCollector
    /// How long past the reading's length the wall clock may run, from its first beat.
    let allowance: Duration

    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        SessionOutput(
            delivery: .immediate(
                ReadingCollectorSink(collector: collector, stop: context.stop, allowance: allowance)))
    }
}

/// Hands the events to the collector; starts the wall-clock allowance at the first beat.
final class ReadingCollectorSink: EventSink {
    private let collector: ReadingCollector
    private let stop: SessionStop
    private let allowance: Duration
    private let timer = Mutex<Task<Void, Never>?>(nil)

    init(collector: ReadingCollector, stop: SessionStop, allowance: Duration) {
        self.collector = collector
        self.stop = stop
        self.allowance = allowance
    }

    func receive(_ event: MonitorEvent) {
        let wasStarted = collector.started
        if collector.take(event) { stop.stop(.finished) }
        guard !wasStarted, collector.started else { return }
        let (collector, stop, limit) = (collector, stop, Duration.seconds(collector.wanted) + allowance)
        timer.withLock {
            $0 = Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                if collector.timedOut() { stop.stop(.finished) }
            }
        }
    }

    func finish() async {
        timer.withLock { $0?.cancel() }
    }
}
