import Foundation
import Synchronization
import Threads

/// hrm-sim's record of what clients called and what it sent, as JSON lines, so that tests can
/// assert on order (say, StopNotify and Disconnect after Ctrl-C).
///
/// Each line has `t` (seconds since the simulator started) and `event`: `call`, `reply`, `error`,
/// `signal-state` (a state change it announced), `notify` (a notification sent, `via` fd or
/// signal, with `mono_ns`: CLOCK_MONOTONIC when it was sent), `drop`, `restart`, `power`.
public final class SimulatorLog: Sendable {
    private let handle: FileHandle?
    private let start = ContinuousClock.now
    private let lock = Mutex(())

    /// Writes to `path`; nil keeps no log.
    public init(path: String?) throws {
        if let path {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
            self.handle = handle
        } else {
            self.handle = nil
        }
    }

    public var seconds: Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    public func record(_ event: String, _ fields: [String: Any] = [:]) {
        guard let handle else { return }
        var entry = fields
        entry["t"] = (seconds * 1000).rounded() / 1000
        entry["event"] = event
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: entry, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        lock.withLock { _ in
            handle.write(data)
            handle.write(Data([0x0A]))
        }
    }
}
