import Synchronization

/// A stage every event of a session passes through, in order, before any sink sees it: counts
/// today, HRV and zones next. It lives for the whole session, across reconnects.
///
/// `process` runs under the pipeline's lock, on whichever thread sent the event (often the
/// strap's notification reader): it must be quick and must not block. It passes the event on
/// with `emit` (unchanged, changed, or not at all) and may emit events of its own after it.
package protocol EventProcessor: AnyObject {
    func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void)
}

/// Where events end up: stdout, and later a recording, web clients, MQTT.
///
/// `receive` is called in the pipeline's order, under its lock, on the sender's thread: it must
/// be quick and must not block (no I/O). A sink that does I/O hands the event to a `QueuedSink`,
/// which does the work on a task of its own; stdout queues its bytes and writes them in
/// `afterSend`, once the lock is released.
package protocol EventSink: Sendable {
    /// The session begins (before any event): a sink with work of its own starts it here, never
    /// in its initialiser, so that the session owns it from start to `finish`. Nothing by
    /// default.
    func start()
    func receive(_ event: MonitorEvent)
    /// Called after every `send`, once the pipeline's lock is released, on the sender's thread
    /// (which may be the strap's notification reader or a task of Swift's pool): the place for
    /// what `receive` only queued (stdout's write). Nothing by default.
    func afterSend()
    /// The session is over: write what is left and return when done (or given up).
    func finish() async
}

extension EventSink {
    package func start() {}
    package func afterSend() {}
}

/// One session's flow: events in (from the connection supervisors and the session), processors
/// in order, then a fan-out to every sink. The caller never knows how many sinks there are.
package final class EventPipeline: Sendable {
    private struct Stages: ~Copyable {
        package var processors: [any EventProcessor]
        package let sinks: [any EventSink]
    }

    private let stages: Mutex<Stages>
    private let sinks: [any EventSink]

    package init(processors: sending [any EventProcessor], sinks: [any EventSink]) {
        stages = Mutex(Stages(processors: processors, sinks: sinks))
        self.sinks = sinks
    }

    /// Passes `event` through the processors to the sinks. Events sent from several threads are
    /// seen in one order by every sink. The lock is held only while processors and sinks take the
    /// event (quick, never blocking); what a sink writes comes after (`afterSend`).
    package func send(_ event: MonitorEvent) {
        stages.withLock { stages in
            Self.run(event, from: 0, stages.processors, stages.sinks)
        }
        // Each sink used where it is: a copy taken out of the array is retained and released,
        // through the slow path for a sink something holds weakly (stdout's), per notification.
        for index in sinks.indices { sinks[index].afterSend() }
    }

    private static func run(
        _ event: MonitorEvent, from index: Int, _ processors: [any EventProcessor], _ sinks: [any EventSink]
    ) {
        guard index < processors.count else {
            for position in sinks.indices { sinks[position].receive(event) }
            return
        }
        processors[index].process(event) { run($0, from: index + 1, processors, sinks) }
    }

    /// Starts every sink's own work (a queued output's task, the display's header), in order:
    /// before the first event.
    package func start() {
        for sink in sinks { sink.start() }
    }

    /// Lets every sink finish its work, in order.
    package func finish() async {
        for sink in sinks { await sink.finish() }
    }
}
