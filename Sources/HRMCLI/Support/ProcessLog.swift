import BlueZ
import Logging
import Monitor
import Outputs
import SessionLibrary
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// hrm's logging for the whole process: off unless `-v`/`--verbose` or `HRM_LOG` asks for it,
/// then lines on stderr (`StderrLogHandler`).
///
/// The libraries (DBus, BlueZ) make no loggers of their own: as swift-log asks of libraries, they
/// take one from their caller (`BlueZClient.connect(logger:busLogger:)`, `Connection(logger:)`)
/// and log nothing without it. They take it explicitly, not through the task-local
/// `Logger.current`, because much of what they log happens on threads that are not tasks (the
/// D-Bus connection's loop, the notify socket's reader), which a task-local does not reach. hrm,
/// the application, makes the loggers here, one per layer so that every line says where it comes
/// from, and bootstraps swift-log once, at its entry, before any of them is made.
enum HRMLog {
    /// The level chosen for this process; nil: nothing is logged.
    private static let level = Mutex<Logger.Level?>(nil)
    private static let started = Atomic<Bool>(false)

    /// The method calls and subscriptions on the bus.
    static let dbus = Logger(label: "dbus", factory: handler)
    /// The BlueZ client's decisions and bluetoothd's signals.
    static let bluez = Logger(label: "bluez", factory: handler)
    /// A session's decisions: the strap chosen and why, connecting, drops, reconnecting.
    static let watch = Logger(label: "watch", factory: handler)

    /// The loggers a watch session writes to.
    static var session: SessionLogs { SessionLogs(watch: watch, bluez: bluez, dbus: dbus) }

    /// Chooses the level (`-v` counted, else `HRM_LOG`) and bootstraps swift-log; once per
    /// process, at the entry, before anything logs. A bad `HRM_LOG` is a warning on stderr, and
    /// logging stays off.
    static func start(verbosity: Int, environment: String? = Self.environment) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let (chosen, warning) = choose(verbosity: verbosity, environment: environment)
        if let warning { StandardOutput.diagnostic(warning) }
        level.withLock { $0 = chosen }
        LoggingSystem.bootstrap(handler)
    }

    /// `HRM_LOG` as set (nil when unset or empty, NO_COLOR's rule).
    static var environment: String? {
        guard let value = getenv("HRM_LOG"), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// The level for `-v` given `verbosity` times and `HRM_LOG` set to `environment`: the flag
    /// wins (-v debug, -vv trace); else HRM_LOG's level; else none. A bad HRM_LOG gives a
    /// warning to print.
    static func choose(verbosity: Int, environment: String?) -> (Logger.Level?, warning: String?) {
        if verbosity > 0 { return (verbosity == 1 ? .debug : .trace, nil) }
        guard let environment else { return (nil, nil) }
        switch parse(environment) {
        case .level(let level): return (level, nil)
        case .off: return (nil, nil)
        case nil:
            let shown = TerminalText.sanitised(environment, limit: TerminalText.messageLimit)
            return (
                nil,
                "hrm: warning: HRM_LOG=\(shown) is not a log level (\(levelNames)): nothing is logged"
            )
        }
    }

    enum Choice: Equatable {
        case level(Logger.Level)
        case off
    }

    /// `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical` (any case), or `off`.
    static func parse(_ text: String) -> Choice? {
        let name = text.lowercased()
        if name == "off" { return .off }
        return Logger.Level(rawValue: name).map(Choice.level)
    }

    static let levelNames = "trace, debug, info, notice, warning, error, critical or off"

    /// Every logger of the process is made here: lines on stderr at the level chosen, or nothing.
    @Sendable static func handler(_ label: String) -> any LogHandler {
        guard let chosen = level.withLock({ $0 }) else { return SwiftLogNoOpLogHandler() }
        return StderrLogHandler(label: label, level: chosen)
    }
}
