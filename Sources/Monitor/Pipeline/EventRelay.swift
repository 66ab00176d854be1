import Synchronization

/// Sends events into a pipeline that is built after the sinks that send them (a queued sink
/// reporting a problem): events before `connect` are dropped, which cannot happen in practice
/// because sinks get their first event from the pipeline.
package final class EventRelay: Sendable {
    private let pipeline = Mutex<EventPipeline?>(nil)

    package func connect(_ pipeline: EventPipeline) {
        self.pipeline.withLock { $0 = pipeline }
    }

    /// Call from a sink's own task, never under the pipeline's lock.
    package func send(_ event: MonitorEvent) {
        pipeline.withLock { $0 }?.send(event)
    }
}
