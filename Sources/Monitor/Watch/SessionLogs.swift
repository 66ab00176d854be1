package import Logging

/// The loggers a session writes to, one per layer so that every line says where it comes from.
/// The monitoring core makes none of its own (as swift-log asks of libraries): the application
/// hands them in, and without them nothing is logged.
package struct SessionLogs: Sendable {
    /// A logger that drops everything: the default.
    package static let silent = Logger(label: "hrm.silent", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The session's decisions: the strap chosen and why, connecting, drops, reconnecting.
    package var watch = SessionLogs.silent
    /// The BlueZ client's decisions and bluetoothd's signals.
    package var bluez = SessionLogs.silent
    /// The method calls and subscriptions on the bus.
    package var dbus = SessionLogs.silent

    /// No logging.
    package init() {}

    /// The three loggers given.
    package init(watch: Logger, bluez: Logger, dbus: Logger) {
        self.watch = watch
        self.bluez = bluez
        self.dbus = dbus
    }
}
