import Foundation
import Testing

/// `-v`/`--verbose` and `HRM_LOG`, with the built binary under hrm-sim: what a user with real
/// hardware would attach to a bug report.
@Suite struct LoggingBinaryTests {
    /// `2026-11-23T20:01:34.123Z debug dbus: ...`: a line of hrm's log.
    static func isLogLine(_ line: some StringProtocol) -> Bool {
        String(line).contains(
            #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (trace|debug|info|notice|warning|error|critical) (dbus|bluez|watch): /#
        )
    }

    static func logLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter(isLogLine)
    }

    /// `hrm ARGUMENTS` under hrm-sim playing `scenario`, with HRM_LOG set to `hrmLog` (empty:
    /// as if unset, whatever the environment running the tests has).
    static func watch(_ arguments: [String], hrmLog: String = "", scenario: String = "basic") async throws
        -> HRMProcess.Result
    {
        let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim")
        return try await HRMProcess.run(
            ["--scenario", scenario, "--", HRMProcess.binary.path] + arguments, executable: sim,
            environment: ["HRM_LOG": hrmLog])
    }

    static func types(_ stdout: String) -> [String] {
        WatchBinaryTests.lines(stdout).map { $0["type"] as? String ?? "?" }
    }

    /// -v logs every call on the bus with its outcome, the signals that matter and watch's
    /// choices, on stderr; stdout is the same JSON lines as without it.
    @Test func verboseLogsTheBusToStderrOnly() async throws {
        let quiet = try await Self.watch(["watch", "--json", "--count", "3"])
        let verbose = try await Self.watch(["watch", "--json", "--count", "3", "-v"])
        #expect(quiet.status == 0 && verbose.status == 0, "\(verbose.stderr)")
        // (The basic strap's battery drops after some seconds: on a loaded machine, within the run.)
        let ignoringBattery = { (stdout: String) in Self.types(stdout).filter { $0 != "battery" } }
        #expect(ignoringBattery(verbose.stdout) == ignoringBattery(quiet.stdout))
        #expect(Self.types(verbose.stdout).filter { $0 == "measurement" }.count == 3)
        for line in verbose.stdoutLines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
        let lines = Self.logLines(verbose.stderr)
        let text = lines.joined(separator: "\n")
        #expect(lines.contains { $0.contains("debug dbus: call org.bluez.Device1.Connect()") }, "\(text)")
        #expect(
            lines.contains {
                $0.contains("debug dbus: reply org.bluez.Device1.Connect") && $0.contains(" ms=")
            })
        #expect(lines.contains { $0.contains("org.bluez.GattCharacteristic1.AcquireNotify") })
        #expect(
            lines.contains { $0.contains("org.bluez.Adapter1.SetDiscoveryFilter") && $0.contains("\"le\"") })
        #expect(lines.contains { $0.contains("bluez: PropertiesChanged") && $0.contains("Connected=true") })
        #expect(lines.contains { $0.contains("bluez: InterfacesAdded") && $0.contains("org.bluez.Device1") })
        #expect(lines.contains { $0.contains("info watch: chose D2:4B:7E:10:20:30") })
        #expect(lines.contains { $0.contains("bluez: adapter hci0 chosen") })
        // Debug, not trace: no line per notification.
        #expect(!lines.contains { $0.contains(" trace ") }, "\(text)")
        // Everything on stderr is a log line (the run had nothing else to say).
        let other = verbose.stderr.split(separator: "\n").filter { !Self.isLogLine($0) }
        #expect(other.isEmpty, "\(other)")
    }

    /// Without -v or HRM_LOG nothing is logged at all.
    @Test func nothingIsLoggedUnlessAsked() async throws {
        let result = try await Self.watch(["watch", "--json", "--count", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.logLines(result.stderr).isEmpty, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    /// HRM_LOG=trace adds each notification (AcquireNotify's here); HRM_LOG=debug is -v; the
    /// flag wins over the environment.
    @Test func hrmLogChoosesTheLevel() async throws {
        let trace = try await Self.watch(["watch", "--json", "--count", "3"], hrmLog: "trace")
        #expect(trace.status == 0, "\(trace.stderr)")
        let notifications = Self.logLines(trace.stderr).filter {
            $0.contains("trace bluez: notification") && $0.contains("by AcquireNotify: ay:")
        }
        #expect(notifications.count >= 3, "\(trace.stderr)")
        let debug = try await Self.watch(["watch", "--json", "--count", "2"], hrmLog: "debug")
        #expect(Self.logLines(debug.stderr).contains { $0.contains("org.bluez.Device1.Connect") })
        #expect(!Self.logLines(debug.stderr).contains { $0.contains(" trace ") })
        let flagWins = try await Self.watch(["watch", "--json", "--count", "2", "-v"], hrmLog: "trace")
        #expect(Self.logLines(flagWins.stderr).contains { $0.contains(" debug dbus: call ") })
        #expect(!Self.logLines(flagWins.stderr).contains { $0.contains(" trace ") })
        let info = try await Self.watch(["watch", "--json", "--count", "2"], hrmLog: "info")
        let infoLines = Self.logLines(info.stderr)
        #expect(infoLines.contains { $0.contains("info watch: connected to D2:4B:7E:10:20:30") })
        #expect(!infoLines.contains { $0.contains(" debug ") || $0.contains(" trace ") })
    }

    /// By StartNotify (a bluetoothd without AcquireNotify), -vv shows each notification too.
    @Test func traceShowsStartNotifyNotifications() async throws {
        let scenario = try HostileWorldTests.scenario("start-notify-log.json", #", "acquireNotify": false"#)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        let result = try await Self.watch(
            ["watch", "--json", "--count", "3", "-vv", "Polar"], scenario: scenario)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Self.logLines(result.stderr)
        #expect(lines.contains { $0.contains("call org.bluez.GattCharacteristic1.StartNotify()") })
        #expect(
            lines.filter { $0.contains("trace bluez: notification") && $0.contains("by StartNotify") }.count
                >= 3)
        #expect(Self.types(result.stdout).filter { $0 == "measurement" }.count == 3)
    }

    /// A bad HRM_LOG is a warning, not a failure, and logs nothing.
    @Test func aBadHRMLogIsAWarning() async throws {
        let result = try await Self.watch(["watch", "--json", "--count", "1"], hrmLog: "bogus")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("hrm: warning: HRM_LOG=bogus is not a log level"), "\(result.stderr)")
        #expect(Self.logLines(result.stderr).isEmpty)
        #expect(Self.types(result.stdout).filter { $0 == "measurement" }.count == 1)
    }

    /// `hrm serve` runs hrm-serve in its place, which logs as watch does: -v there too, and a bad
    /// HRM_LOG is one warning, not one from each.
    @Test func serveLogsLikeWatch() async throws {
        let verbose = try await Self.watch([
            "serve", "--listen", "127.0.0.1:0", "--json", "--count", "2", "-v",
        ])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(
            Self.logLines(verbose.stderr).contains {
                $0.contains("debug dbus: call org.bluez.Device1.Connect()")
            })
        let bogus = try await Self.watch(
            ["serve", "--listen", "127.0.0.1:0", "--json", "--count", "1"], hrmLog: "bogus")
        #expect(bogus.status == 0, "\(bogus.stderr)")
        #expect(
            bogus.stderr.components(separatedBy: "HRM_LOG=bogus is not a log level").count == 2,
            "\(bogus.stderr)")
        #expect(Self.logLines(bogus.stderr).isEmpty)
    }

    /// A call that fails is logged with bluetoothd's error name and message.
    @Test func aFailedCallIsLoggedWithItsError() async throws {
        let result = try await Self.watch(
            ["watch", "--json", "--count", "1", "-v"], scenario: "connect-abort")
        let errors = Self.logLines(result.stderr).filter {
            $0.contains("debug dbus: error org.bluez.Device1.Connect")
        }
        #expect(
            errors.contains { $0.contains("org.bluez.Error.") && $0.contains(" ms=") }, "\(result.stderr)")
    }

    /// On a terminal, log lines never land on the end of the live line: it is cleared first.
    @Test func logLinesClearTheLiveLineFirst() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("/usr/bin/script is not installed (Debian's bsdutils, an essential package)")
            return
        }
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.runUnderSim(
            "basic", [],
            shell:
                "TERM=xterm NO_COLOR=1 HRM_LOG=trace /usr/bin/script -qefc \"'\(hrm)' watch --count 4\" /dev/null"
        )
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout
        #expect(text.contains("\u{1B}[2K"), "a live line")
        let starts = text.ranges(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z trace bluez: notification/#)
        #expect(starts.count >= 3, "\(text.debugDescription)")
        // The first notification's line comes before the live line exists; the later ones while it
        // is on the screen.
        #expect(starts.filter { text[..<$0.lowerBound].hasSuffix("\r\u{1B}[2K") }.count >= 2)
        for range in starts {
            let before = text[..<range.lowerBound]
            #expect(
                // (A terminal's newline is "\r\n", one Character to Swift.)
                before.hasSuffix("\r\u{1B}[2K") || before.hasSuffix("\r\n") || before.hasSuffix("\n"),
                "\(before.suffix(40).debugDescription)")
        }
    }
}
