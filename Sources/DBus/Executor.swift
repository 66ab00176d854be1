/// Runs tasks on a connection's own event-loop thread. A task that makes many sequential calls
/// can prefer it (`withTaskExecutorPreference(connection.taskExecutor) { ... }`): replies then
/// resume the task on the thread that read them, without waking a second thread.
final class LoopTaskExecutor: TaskExecutor, Sendable {
    private let core: Core

    init(core: Core) { self.core = core }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        if core.execute({ job.runSynchronously(on: executor) }) { return }
        // The loop has stopped: run the job here rather than lose it.
        job.runSynchronously(on: executor)
    }
}

extension Connection {
    /// An executor that runs tasks on this connection's event-loop thread (see `LoopTaskExecutor`).
    /// Only for short, non-blocking work: while such a task runs, the connection reads nothing.
    public var taskExecutor: any TaskExecutor { executor }
}
