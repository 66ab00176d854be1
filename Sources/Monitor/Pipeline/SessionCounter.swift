import Synchronization

/// Counts what a session printed, over every connection: measurements and malformed
/// notifications. With `--count` it passes on that many measurements, swallows any still on
/// their way, and stops the session.
package final class SessionCounter: EventProcessor, Sendable {
    package struct Counts: Sendable, Equatable {
        package var measurements = 0
        package var malformed = 0
    }

    /// Written only by `process`, which runs under the pipeline's lock: a load and a store, no
    /// lock of its own (one fewer a notification, #29); atomic for `current`'s readers.
    private let measurements = Atomic(0)
    private let malformed = Atomic(0)
    private let limit: Int?
    private let stop: SessionStop

    package init(limit: Int?, stop: SessionStop) {
        self.limit = limit
        self.stop = stop
    }

    package var current: Counts {
        Counts(
            measurements: measurements.load(ordering: .acquiring),
            malformed: malformed.load(ordering: .acquiring))
    }

    package func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        switch event.kind {
        case .measurement:
            let counted = measurements.load(ordering: .relaxed)
            if let limit, counted >= limit { return stop.stop(.countReached) }
            measurements.store(counted + 1, ordering: .releasing)
            emit(event)
            if let limit, counted + 1 >= limit { stop.stop(.countReached) }
        case .error(let code, _, let hex) where hex != nil || code == .malformedValue:
            malformed.store(malformed.load(ordering: .relaxed) + 1, ordering: .releasing)
            emit(event)
        default:
            emit(event)
        }
    }

    /// For the `stopped` status: how many measurements, and malformed notifications if any.
    package var summary: String {
        let (measurements, malformed) = (current.measurements, current.malformed)
        let counted = "\(measurements) measurement\(measurements == 1 ? "" : "s")"
        guard malformed > 0 else { return counted }
        return counted + ", \(malformed) malformed notification\(malformed == 1 ? "" : "s") skipped"
    }
}
