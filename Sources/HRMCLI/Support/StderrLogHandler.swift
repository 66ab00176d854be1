import Logging
import Monitor
import Outputs
import SessionLibrary

/// swift-log's records as lines on stderr, for a person to read and attach to a bug report:
///
///     2026-11-23T20:01:34.123Z debug dbus: call org.bluez.Device1.Connect() call=12 dest=org.bluez path=/org/bluez/hci0/dev_C0_FF_EE_00_00_01 timeout=20 s
///
/// The time (UTC, milliseconds, as hrm's JSON lines have it), the level, the logger's label
/// (`dbus`, `bluez`, `watch`), the message, then the metadata sorted by key. Each line goes
/// through `StandardOutput.diagnostic`, so a live line on the terminal is taken off and drawn
/// again around it, and no control character from outside (a device's name) reaches the terminal.
/// Only stderr: stdout stays the command's output (pure JSON lines with --json).
struct StderrLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    /// Where a finished line goes; tests give their own.
    private let write: @Sendable (String) -> Void

    init(
        label: String, level: Logger.Level,
        write: @escaping @Sendable (String) -> Void = { StandardOutput.diagnostic($0) }
    ) {
        self.label = label
        self.logLevel = level
        self.write = write
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let given = event.metadata { all.merge(given) { $1 } }
        if let error = event.error { all["error"] = "\(error)" }
        write(
            Self.line(
                time: .now(), level: event.level, label: label, message: "\(event.message)", metadata: all))
    }

    /// One record as its line (without the newline).
    static func line(
        time: Timestamp, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata
    ) -> String {
        var text = "\(time) \(level.rawValue) \(label): \(message)"
        for key in metadata.keys.sorted() {
            guard let value = metadata[key] else { continue }
            text += " \(key)=\(quotedIfNeeded("\(value)"))"
        }
        return text
    }

    /// A value with a space, a quote or nothing in it, quoted, so that `key=value` pairs stay
    /// apart for a reader and for grep.
    static func quotedIfNeeded(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) else {
            return value
        }
        return value.debugDescription
    }
}
