import Synchronization
import Testing
import Threads

/// `Mutex.wait(in:until:)`: woken by the owner's `takeAll` once the condition holds, at once when
/// it holds already, and at once when the waiting task is cancelled.
@Suite struct WaitersTests {
    struct State {
        var open = false
        var waiters = Waiters()
    }

    final class Gate: Sendable {
        let state = Mutex(State())

        func open() {
            let waiting = state.withLock { state in
                state.open = true
                return state.waiters.takeAll()
            }
            for waiter in waiting { waiter.resume() }
        }

        func waitUntilOpen() async { await state.wait(in: \.waiters) { $0.open } }

        var parked: Int { state.withLock { state in state.waiters.count } }
    }

    @Test func theOwnerWakesThemOnceItHolds() async {
        let gate = Gate()
        let waiting = (0..<3).map { _ in Task { await gate.waitUntilOpen() } }
        // Every waiter parked before the gate opens: nothing can have returned yet.
        while gate.parked < 3 { await Task.yield() }
        gate.open()
        for task in waiting { await task.value }
        #expect(gate.parked == 0)
    }

    @Test func alreadyTrueReturnsAtOnce() async {
        let gate = Gate()
        gate.open()
        await gate.waitUntilOpen()
        #expect(gate.parked == 0)
    }

    @Test func aCancelledWaiterReturnsAndLeavesNothing() async {
        let gate = Gate()
        let waiting = Task { await gate.waitUntilOpen() }
        while gate.parked < 1 { await Task.yield() }
        waiting.cancel()
        await waiting.value
        #expect(gate.parked == 0)
        #expect(gate.state.withLock { !$0.open })
    }
}
