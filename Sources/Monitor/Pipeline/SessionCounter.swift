import Synchronization

/// Counts what a session printed, over every connection: measurements and malformed
/// notifications. With `--count` it passes on that many measurements, swallows any still on
/// their way, and stops the session.
package final class SessionCounter: EventProcessor, Sendable {
    package struct Counts: Sendable, Equatable {
        package var measurements = 0
        package var malformed = 0
    }

    private let counts = Mutex(Counts())
    private let limit: Int?
    private let stop: SessionStop

    package init(limit: Int?, stop: SessionStop) {
        self.limit = limit
        self.stop = stop
    }

    package var current: Counts { counts.withLock { $0 } }

    package func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        switch event.kind {
        case .measurement:
            let (wanted, reached) = counts.withLock { counts -> (Bool, Bool) in
                if let limit, counts.measurements >= limit { return (false, true) }
                counts.measurements += 1
                return (true, limit.map { counts.measurements >= $0 } ?? false)
            }
            if wanted { emit(event) }
            if reached { stop.stop(.countReached) }
        case .error(let code, _, let hex) where hex != nil || code == .malformedValue:
            counts.withLock { $0.malformed += 1 }
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
