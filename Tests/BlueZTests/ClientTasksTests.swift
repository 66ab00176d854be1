import Synchronization
import Testing

@testable import BlueZ

/// The client's tasks started from callbacks: kept until they end, cancelled and waited for by
/// close(), run cancelled after it.
@Suite(.timeLimit(.minutes(1))) struct ClientTasksTests {
    final class Flag: Sendable {
        private let value = Atomic(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }

    @Test func closeCancelsWhatRunsAndWaitsForIt() async {
        let tasks = ClientTasks()
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        // Never yields nor finishes: the task below waits on it until cancelled.
        let (never, keepOpen) = AsyncStream.makeStream(of: Void.self)
        let ended = Flag()
        tasks.run {
            starting.yield()
            for await _ in never {}
            ended.set()
        }
        for await _ in started { break }
        #expect(tasks.count == 1)
        await tasks.close()
        #expect(ended.isSet, "close() returned only once the task had ended")
        #expect(tasks.count == 0)
        keepOpen.finish()
    }

    @Test func aTaskThatEndsIsNotKept() async {
        let tasks = ClientTasks()
        let ran = Flag()
        await tasks.run { ran.set() }.value
        #expect(ran.isSet)
        #expect(tasks.count == 0)
    }

    @Test func afterCloseATaskRunsCancelled() async {
        let tasks = ClientTasks()
        await tasks.close()
        let cancelled = Flag()
        await tasks.run { if Task.isCancelled { cancelled.set() } }.value
        #expect(cancelled.isSet)
        #expect(tasks.count == 0)
    }
}
