internal import CThreadShims
internal import Glibc

/// The one way hrm starts a thread of its own: a named, detached thread running one closure,
/// for loops that block in poll(2) (D-Bus, MQTT, a notification socket) and so must stay off
/// Swift's cooperative pool. Nothing joins it: the closure returns when its loop is told to end.
public enum LoopThread {
    /// Why a thread could not be started.
    public struct StartError: Error, Sendable, Equatable {
        /// pthread_create's error number (EAGAIN: the process or the system is out of threads).
        public let code: Int32
        /// The error number in words.
        public var message: String { String(cString: strerror(code)) }
    }

    private final class Box {
        let name: String
        let body: () -> Void
        init(_ name: String, _ body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// True on a thread this type started, false on any other (Swift's cooperative pool, the main
    /// thread): code that may block (a write to stdout) does so only where it holds up no task.
    public static var isCurrent: Bool { hrm_is_dedicated_thread() != 0 }

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept; `ps -L` and
    /// debuggers show it).
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) throws(StartError) {
        let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
                hrm_set_thread_name(box.name)
                hrm_mark_dedicated_thread()
                box.body()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw StartError(code: result)
        }
        pthread_detach(thread)
    }
}
