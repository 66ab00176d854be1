import Monitor
import Synchronization

/// Whether the recording the user asked for (`hrm record`, `watch --record`) failed: a full
/// disk, a name already taken. Watching goes on when it does, so the run's exit status is the
/// one place left to say it: 74 (EX_IOERR) instead of 0. Set by `RecordingSink`'s task, read by
/// the session once every sink has finished.
package final class RecordingOutcome: Sendable {
    private let failure = Mutex<String?>(nil)
    private let path = Mutex<String?>(nil)

    package init() {}

    /// The first failure is the one that ended the recording.
    package func failed(_ reason: String) {
        failure.withLock { if $0 == nil { $0 = reason } }
    }

    /// The recording was closed whole at `path` (what `hrm readiness` ends with its result).
    package func kept(_ path: String) {
        self.path.withLock { $0 = path }
    }

    /// Where the recording was kept, once it was closed whole; nil before, or when it was not.
    package var keptPath: String? { path.withLock { $0 } }

    /// Why the recording was not kept, or nil when it was.
    package var failureReason: String? { failure.withLock { $0 } }
}
