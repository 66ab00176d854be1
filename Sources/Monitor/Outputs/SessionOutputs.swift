/// A session's outputs, opened, in the order the contract gives them events: the queued ones
/// (each behind its bounded queue), then the immediate ones, then the display on stdout, then
/// those after the display.
package struct SessionOutputs: Sendable {
    /// Every output as the pipeline's sinks, in order.
    package let sinks: [any EventSink]
    /// The display on stdout, when the session has one.
    package let display: (any EventSink)?
    private let verdicts: [@Sendable () -> OutputVerdict?]

    /// Opens `providers` in the order given (the order they were asked for). The first failure
    /// ends it: the outputs opened before it have taken no event, and give back what they took
    /// (`abandon`, the last opened first) before the failure is thrown.
    static func open(_ providers: [any OutputProvider], _ context: OutputContext) async throws(OutputFailure)
        -> SessionOutputs
    {
        var opened: [SessionOutput] = []
        for provider in providers {
            do throws(OutputFailure) {
                opened.append(try await provider.open(context))
            } catch {
                for output in opened.reversed() { await output.abandon?() }
                throw error
            }
        }
        return SessionOutputs(opened, report: context.report)
    }

    /// Outputs already opened, put in the contract's order; `report` takes what a queue has to
    /// say (events dropped).
    package init(_ outputs: [SessionOutput], report: @escaping @Sendable (MonitorEvent) -> Void) {
        var queued: [any EventSink] = []
        var immediate: [any EventSink] = []
        var display: (any EventSink)? = nil
        var trailing: [any EventSink] = []
        for output in outputs {
            switch output.delivery {
            case .queued(let sink, let queue): queued.append(QueuedSink(sink, queue, report: report))
            case .immediate(let sink): immediate.append(sink)
            case .display(let sink):
                precondition(display == nil, "a session has one display")
                display = sink
            case .afterDisplay(let sink): trailing.append(sink)
            }
        }
        sinks = queued + immediate + (display.map { [$0] } ?? []) + trailing
        self.display = display
        verdicts = outputs.compactMap(\.verdict)
    }

    /// The first output whose failure changes the run's exit status, once the session is over.
    package func verdict() -> OutputVerdict? {
        for verdict in verdicts {
            if let found = verdict() { return found }
        }
        return nil
    }
}

extension QueuedSink {
    /// `sink` behind the queue `queue` describes; events it drops are reported through `report`
    /// as an `error` event with the queue's code.
    package convenience init(
        _ sink: any SlowEventSink, _ queue: OutputQueue, report: @escaping @Sendable (MonitorEvent) -> Void
    ) {
        self.init(sink, capacity: queue.capacity, policy: queue.policy, gather: queue.gather) { trouble in
            guard case .dropped(let count) = trouble else { return }
            report(
                MonitorEvent(
                    device: nil,
                    kind: .error(code: queue.droppedCode, message: queue.dropped(count), hex: nil)))
        }
    }
}
