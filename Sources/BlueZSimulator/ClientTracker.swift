import Synchronization

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
    }
    private let state = Mutex(State())

    func arrive(from sender: String?) {
        state.withLock { value in
            if let sender { value.present.insert(sender) }
            value.running += 1
        }
    }

    func finished() { state.withLock { $0.running -= 1 } }

    func left(_ name: String) { _ = state.withLock { $0.present.remove(name) } }

    /// No caller left on the bus and no call still running.
    var settled: Bool { state.withLock { $0.present.isEmpty && $0.running == 0 } }
}
