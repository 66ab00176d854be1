import Monitor

/// Where a session records, as the command line chose it.
package enum RecordingChoice: Sendable {
    /// `watch --record PATH`.
    case file(String)
    /// `hrm record`: the sessions folder.
    case sessions(SessionsFolder)
}

/// The recording asked for, as a session's output: the file is created (or the folder made)
/// before the strap is touched, so that a path that exists or a folder that cannot be made is
/// told at once (exit 73). A disk that fails during the run ends the recording, not the run,
/// whose exit status then says it (74).
package struct RecordingOutput: OutputProvider {
    /// Where to record.
    package let choice: RecordingChoice

    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        let target: RecordingSink.Target
        var created: RecordingFile? = nil
        do throws(RecordingFile.Failure) {
            switch choice {
            case .file(let path):
                let file = try RecordingFile(creating: path)
                created = file
                target = .file(file)
            case .sessions(let folder):
                try folder.prepare()
                target = .sessions(folder)
            }
        } catch {
            throw OutputFailure(code: .recordingFailed, message: "\(error)", status: 73)  // EX_CANTCREAT
        }
        let sink = RecordingSink(
            target, start: .now(), startInstant: .now, command: context.command, outcome: outcome,
            console: context.options.console, report: context.report)
        // 4096 events, more than an hour of a strap at 1 Hz, for a slow disk's hiccups; lines reach
        // the file within 50 ms: a batch per wake-up instead of a wake-up per event.
        let queue = OutputQueue(
            capacity: 4096, policy: .dropOldest, gather: .milliseconds(50), droppedCode: .recordingDropped
        ) { count in
            "\(count) event\(count == 1 ? "" : "s") came faster than the disk took them: not recorded"
        }
        return SessionOutput(
            delivery: .queued(sink, queue),
            verdict: {
                outcome.failureReason.map {
                    OutputVerdict(message: "the recording was not kept: \($0)", status: 74)
                }
            },
            // The file made for a run that never started goes again: nothing was written to it.
            abandon: { [created] in created?.discard() })
    }

    /// Told whether the recording was kept, and where.
    package let outcome: RecordingOutcome

    /// Every stored property, as given.
    package init(choice: RecordingChoice, outcome: RecordingOutcome = RecordingOutcome()) {
        self.choice = choice
        self.outcome = outcome
    }
}
