/// The output contract: every place a session's events go (stdout, a recording, `--on-alert`,
/// MQTT, `hrm serve`'s feed, and what comes next) is a provider that the session opens before it
/// touches Bluetooth, and that hands back a `SessionOutput` saying how it takes events.
///
/// Adding an output: one file with its provider and its sink, one file for its option group if it
/// has options (an `OutputOptionGroup`), and its line in `OutputArguments.registry`. CONTRIBUTING
/// walks through an example.
package protocol OutputProvider: Sendable {
    /// Makes the output ready: creates its file, connects to its broker, binds its port. Called
    /// once, before the strap is touched, in the order the outputs were asked for; a failure ends
    /// hrm there with the failure's exit status and nothing connected.
    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput
}

/// What an output is opened with.
package struct OutputContext: Sendable {
    /// The session's choices (the command's name, the output format).
    package let options: WatchOptions
    /// Sends an event into the session (a problem to report), from an output's own task or
    /// thread, never from `receive`, which runs under the pipeline's lock.
    package let report: @Sendable (MonitorEvent) -> Void
    /// Stops the session as Ctrl-C does (stdout's reader went away).
    package let stop: SessionStop

    /// `hrm watch`, `hrm record` or `hrm serve`, for messages.
    package var command: String { options.command }
}

/// An opened output, as the session's pipeline runs it.
///
/// The order rule lives here, not with the caller: queued outputs get each event first (handing
/// it over never waits), then the immediate ones, then the display on stdout, so that what the
/// user reads never runs ahead of what is kept.
package struct SessionOutput: Sendable {
    /// How the pipeline hands the output its events.
    package enum Delivery: Sendable {
        /// The output does I/O of its own (a file, a child process): the session runs it on a task
        /// of its own behind a bounded queue, so that it can never delay the strap's stream.
        case queued(any SlowEventSink, OutputQueue)
        /// The output takes each event at once, on the sender's thread under the pipeline's lock,
        /// and never blocks there: it renders into a non-blocking outbox (MQTT) or hands the line
        /// to its clients' queues (`hrm serve`).
        case immediate(any EventSink)
        /// The session's display on stdout: gets each event after every other output but those
        /// `afterDisplay`.
        case display(any EventSink)
        /// As `immediate`, after the display: an output whose work for an event (its `afterSend`)
        /// should not come before the user's line, such as the relay's signal to bluetoothd.
        case afterDisplay(any EventSink)
    }

    /// How the output takes events.
    package var delivery: Delivery
    /// Asked once the session is over: a failure of the output that changes the run's exit status
    /// (a recording asked for and not kept), or nil.
    package var verdict: (@Sendable () -> OutputVerdict?)? = nil
    /// Called instead of the session when an output opened after this one cannot be: gives back
    /// what opening took (a recording's new file, a broker's connection), so that a run that never
    /// started leaves nothing behind. Nil: nothing to give back.
    package var abandon: (@Sendable () async -> Void)? = nil

    /// Every stored property, as given.
    package init(
        delivery: Delivery, verdict: (@Sendable () -> OutputVerdict?)? = nil,
        abandon: (@Sendable () async -> Void)? = nil
    ) {
        self.delivery = delivery
        self.verdict = verdict
        self.abandon = abandon
    }
}

/// A queued output's queue: its bound, what gives when it is full, and what is said then.
package struct OutputQueue: Sendable {
    /// Events that may wait (and as many more being written).
    package var capacity: Int
    /// What gives when `capacity` events wait.
    package var policy: QueuedSink.Policy
    /// How long the output's task, once woken, waits for more events before it writes: one
    /// wake-up per batch for an output that may lag a little (a recording).
    package var gather: Duration = .zero
    /// The code of the `error` event that reports dropped events.
    package var droppedCode: EventErrorCode
    /// That event's message, for `count` events dropped.
    package var dropped: @Sendable (_ count: Int) -> String

    /// Every stored property, as given.
    package init(
        capacity: Int, policy: QueuedSink.Policy, gather: Duration = .zero, droppedCode: EventErrorCode,
        dropped: @escaping @Sendable (_ count: Int) -> String
    ) {
        self.capacity = capacity
        self.policy = policy
        self.gather = gather
        self.droppedCode = droppedCode
        self.dropped = dropped
    }
}

/// Why an output could not be opened: said on stderr (and as an `error` line in JSON output),
/// then hrm exits with `status` before anything touched Bluetooth.
package struct OutputFailure: Error, Sendable {
    /// The `error` event's code.
    package var code: EventErrorCode
    /// What went wrong, for people.
    package var message: String
    /// The exit status (sysexits.h: 73 a file that cannot be created, 69 a broker away, 77
    /// credentials refused).
    package var status: Int32

    /// Every stored property, as given.
    package init(code: EventErrorCode, message: String, status: Int32) {
        self.code = code
        self.message = message
        self.status = status
    }
}

/// An output's failure that outlived the session: its message on stderr, and the exit status
/// that replaces a clean run's 0.
package struct OutputVerdict: Sendable, Equatable {
    /// What was lost, for people ("the recording was not kept: ...").
    package var message: String
    /// The exit status instead of 0.
    package var status: Int32

    /// Every stored property, as given.
    package init(message: String, status: Int32) {
        self.message = message
        self.status = status
    }
}
