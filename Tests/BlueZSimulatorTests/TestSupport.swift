import BlueZSimulator
import DBus
import Foundation

/// Runs `body`, then `cleanup`, also when `body` throws; `cleanup` has finished when this returns.
func finally<T>(
    _ body: () async throws -> T, then cleanup: () async -> Void
) async throws -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
    return result
}

/// Runs `body` with a simulator serving `scenario` on a private bus of its own. The simulator is
/// stopped and the bus ended after `body`, also when it throws, before this returns.
func withSimulator<T>(
    _ scenario: Scenario, policy: PrivateBus.Policy = .open, timing: Simulator.Timing = Simulator.Timing(),
    log: String? = nil, _ body: (Simulator, PrivateBus) async throws -> T
) async throws -> T {
    let bus = try PrivateBus(policy: policy)
    defer { bus.stop() }
    let simulator = Simulator(
        scenario: scenario, busAddress: bus.address, log: try SimulatorLog(path: log), timing: timing)
    return try await finally {
        try await simulator.start()
        return try await body(simulator, bus)
    } then: {
        await simulator.stop()
    }
}

/// Runs `body` with a client connection to `bus`, closed after `body`, also when it throws.
func withClient<T>(on bus: PrivateBus, _ body: (Connection) async throws -> T) async throws -> T {
    let client = try await Connection(address: bus.address)
    return try await finally {
        try await body(client)
    } then: {
        await client.close()
    }
}

/// True once `fd` is readable, false if `timeout` passes first. The wait blocks a thread of its
/// own, not one of the pool the simulator runs on.
func readable(_ fd: Int32, within timeout: Duration) async -> Bool {
    let milliseconds = Int32(clamping: Int((timeout / .milliseconds(1)).rounded(.up)))
    return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
        Thread.detachNewThread {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var result: Int32
            repeat {
                result = poll(&entry, 1, milliseconds)
            } while result < 0 && errno == EINTR
            done.resume(returning: result == 1)
        }
    }
}
