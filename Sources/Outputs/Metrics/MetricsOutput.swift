package import Monitor
import Synchronization

/// The session's figures for `/metrics`: filled by the session (`MetricsOutput`'s sink, under
/// the pipeline's lock: a few assignments per event), read by each scrape.
package final class SessionMetrics: Sendable {
    private let table = Mutex(MetricsTable())

    /// No strap yet.
    package init() {}

    /// Takes one event (from the sink).
    package func take(_ event: MonitorEvent) {
        table.withLock { $0.take(event) }
    }

    /// The exposition, in the format asked for.
    package func render(openMetrics: Bool) -> String {
        // Copied out under the lock, rendered outside it: a scrape never holds the strap's stream.
        let straps = table.withLock { table in
            table.straps.devices.compactMap { device in table.straps[device].map { (device, $0) } }
        }
        return MetricsExposition.render(straps, version: HRMVersion.current, openMetrics: openMetrics)
    }
}

/// `hrm serve`'s metrics as a session's output: immediate, because taking an event is a few
/// assignments under a lock of its own.
package struct MetricsOutput: OutputProvider {
    /// Where the figures go.
    package let metrics: SessionMetrics

    /// The output that fills `metrics`.
    package init(metrics: SessionMetrics) {
        self.metrics = metrics
    }

    package func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        SessionOutput(delivery: .immediate(MetricsSink(metrics: metrics)))
    }
}

/// The sink: every event into the figures.
private final class MetricsSink: EventSink {
    let metrics: SessionMetrics

    init(metrics: SessionMetrics) {
        self.metrics = metrics
    }

    func receive(_ event: MonitorEvent) { metrics.take(event) }

    func finish() async {}
}
