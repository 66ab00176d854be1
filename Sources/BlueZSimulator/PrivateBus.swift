import DBus
import Foundation
import Spawn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A private `dbus-daemon` on a unix socket in a temporary folder: the bus hrm-sim serves on,
/// so that nothing ever touches the machine's own system bus.
public final class PrivateBus: Sendable {
    public enum Policy: String, Sendable {
        /// Everyone may talk to everyone.
        case open
        /// Method calls to org.bluez are refused by the bus, as the system bus's policy refuses a
        /// user outside the `bluetooth` group: clients get org.freedesktop.DBus.Error.AccessDenied.
        case denyBlueZ = "deny-bluez"
        /// Only the notification calls (AcquireNotify, StartNotify) to org.bluez are refused: a
        /// policy narrower than the `bluetooth` group's, which a client must not mistake for it.
        case denyNotify = "deny-notify"
    }

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The address to hand to clients, as `DBUS_SYSTEM_BUS_ADDRESS`.
    public let address: String
    private let daemon: ChildProcess
    private let directory: URL

    /// Starts the daemon and waits (up to `timeout`) until it listens.
    public init(policy: Policy = .open, timeout: Duration = .seconds(10)) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hrm-bus-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try Self.configuration(socketDirectory: directory.path, policy: policy)
            .write(to: config, atomically: true, encoding: .utf8)

        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0, fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC) == 0,
            fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC) == 0
        else {
            try? FileManager.default.removeItem(at: directory)
            throw StartError(description: "cannot create a pipe: \(systemErrorText())")
        }
        defer { close(pipeFDs[0]) }
        let daemon: ChildProcess
        // The daemon's complaints (it cannot raise its fd limit unprivileged) are not ours to show.
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { if devNull >= 0 { close(devNull) } }
        do {
            daemon = try ChildProcess(
                executable: "dbus-daemon",
                arguments: ["--config-file=\(config.path)", "--nofork", "--nopidfile", "--print-address=1"],
                stdoutFD: pipeFDs[1], stderrFD: devNull >= 0 ? devNull : nil,
                // Ctrl-C and a closed terminal reach the command, which still needs the bus to
                // let its strap go; hrm-sim stops the daemon itself once the command is done.
                ownProcessGroup: true)
            close(pipeFDs[1])
        } catch {
            close(pipeFDs[1])
            try? FileManager.default.removeItem(at: directory)
            throw StartError(description: "\(error) (install the Debian package dbus-daemon)")
        }
        guard let line = Self.readLine(from: pipeFDs[0], timeout: timeout), line.hasPrefix("unix:") else {
            daemon.terminate()
            try? FileManager.default.removeItem(at: directory)
            throw StartError(description: "dbus-daemon did not print its address within \(timeout)")
        }
        self.address = line
        self.daemon = daemon
        self.directory = directory
    }

    deinit {
        stop()
    }

    /// Stops the daemon and removes its folder. Idempotent.
    public func stop() {
        daemon.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// True while the daemon runs.
    public var isRunning: Bool { daemon.poll() == nil }

    static func configuration(socketDirectory: String, policy: Policy) -> String {
        let deny =
            switch policy {
            case .open: ""
            case .denyBlueZ: #"<deny send_destination="org.bluez"/>"#
            case .denyNotify:
                ["AcquireNotify", "StartNotify"].map {
                    #"<deny send_destination="org.bluez" send_interface="org.bluez.GattCharacteristic1" send_member="\#($0)"/>"#
                }.joined(separator: "\n    ")
            }
        return """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(socketDirectory)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                \(deny)
              </policy>
              <limit name="max_replies_per_connection">50000</limit>
              <limit name="max_match_rules_per_connection">50000</limit>
              <limit name="reply_timeout">60000</limit>
            </busconfig>
            """
    }

    /// One line from `fd`, waiting at most `timeout` in all.
    static func readLine(from fd: Int32, timeout: Duration) -> String? {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            var pollfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(
                min(
                    remaining.components.seconds * 1000 + remaining.components.attoseconds
                        / 1_000_000_000_000_000, 60_000))
            let ready = poll(&pollfd, 1, max(ms, 1))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return nil }
            if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}
