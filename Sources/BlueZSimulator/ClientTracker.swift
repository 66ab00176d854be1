import Synchronization
import Threads

/// Which clients have called the simulator and are still on the bus, and how many calls are still
/// being handled: so that hrm-sim, once its command has exited, can let what the command sent just
/// before exiting (a Disconnect it did not wait for) run its course before it stops, as
/// bluetoothd does.
///
/// A call is counted when its dispatch begins, on the bus thread and in bus order; its sender
/// leaving the bus (NameOwnerChanged) comes after all its calls in that order. So once every
/// caller has left and no call is running, every call made has been handled.
final class ClientTracker: Sendable {
    private struct State {
        var present: Set<String> = []
        var running = 0
        var waiters = Waiters()

        var settled: Bool { present.isEmpty && running == 0 }

        /// Those waiting, once settled.
        mutating func wake() -> [CheckedContinuation<Void, Never>] {
            settled ? waiters.takeAll() : []
        }
    }
    private let state = Mutex(State())

    func arrive(from sender: String?) {
        state.withLock { value in
            if let sender { value.present.insert(sender) }
            value.running += 1
        }
    }

    func finished() {
        let waiting = state.withLock { state in
            state.running -= 1
            return state.wake()
        }
        for waiter in waiting { waiter.resume() }
    }

    func left(_ name: String) {
        let waiting = state.withLock { state in
            state.present.remove(name)
            return state.wake()
        }
        for waiter in waiting { waiter.resume() }
    }

    /// No caller left on the bus and no call still running.
    var settled: Bool { state.withLock { $0.settled } }

    /// Returns once settled: woken by the last call or the last caller's leaving, not polled;
    /// or at once when cancelled (the caller's bound on the wait, `Simulator.settle`: a bus that
    /// died never says the caller left).
    func waitUntilSettled() async {
        await state.wait(in: \.waiters) { $0.settled }
    }
}
