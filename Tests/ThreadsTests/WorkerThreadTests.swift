import Synchronization
import Testing
import Threads

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.timeLimit(.minutes(1))) struct WorkerThreadTests {
    @Test func loopThreadsAreMarkedAndThePoolIsNot() async {
        #expect(!LoopThread.isCurrent)
        let marked = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            do throws(LoopThread.StartError) {
                try LoopThread.start(named: "hrm-test-mark") {
                    continuation.resume(returning: LoopThread.isCurrent)
                }
            } catch {
                continuation.resume(returning: false)
            }
        }
        #expect(marked)
    }

    @Test func workRunsInOrderOnAThreadOfItsOwn() async {
        let worker = WorkerThread(named: "hrm-test-order")
        let seen = Mutex<[(Int, Bool)]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<200 {
                worker.submit {
                    seen.withLock { $0.append((index, LoopThread.isCurrent)) }
                    if index == 199 { continuation.resume() }
                }
            }
        }
        let all = seen.withLock { $0 }
        #expect(all.map(\.0) == Array(0..<200))
        #expect(all.allSatisfy { $0.1 })
        worker.stop()
    }

    @Test func runReturnsTheResultOrTheTypedError() async {
        struct Refused: Error, Equatable {}
        let worker = WorkerThread(named: "hrm-test-run")
        let answer = await worker.run { LoopThread.isCurrent ? 42 : 0 }
        #expect(answer == 42)
        await #expect(throws: Refused()) {
            try await worker.run { () throws(Refused) -> Int in throw Refused() }
        }
        worker.stop()
    }

    /// A work blocked in a read holds up the work after it, never the task that submitted it.
    @Test func submittingNeverWaitsForBlockedWork() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (reading, writing) = (ends[0], ends[1])
        defer {
            close(reading)
            close(writing)
        }
        let worker = WorkerThread(named: "hrm-test-block")
        let order = Mutex<[String]>([])
        worker.submit {
            var byte: UInt8 = 0
            _ = read(reading, &byte, 1)
            order.withLock { $0.append("read \(byte)") }
        }
        async let after = worker.run { order.withLock { $0.append("after") } }
        // Here only because submit returned while the read still waits.
        order.withLock { $0.append("submitted") }
        var byte: UInt8 = 7
        #expect(write(writing, &byte, 1) == 1)
        await after
        #expect(order.withLock { $0 } == ["submitted", "read 7", "after"])
        worker.stop()
    }

    @Test func workAfterStopStillRuns() async {
        let worker = WorkerThread(named: "hrm-test-stop")
        worker.stop()  // nothing started: nothing to do
        #expect(await worker.run { 1 } == 1)
        worker.stop()
        #expect(await worker.run { 2 } == 2)
        worker.stop()
        #expect(await worker.run { 3 } == 3)
        worker.stop()
    }
}
