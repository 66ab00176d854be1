import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// hrm against a world that misbehaves: signals at any time, the bus going away, a bluetoothd
/// that never answers or leaves mid-call, a policy narrower than the `bluetooth` group's.
@Suite struct HostileWorldTests {
    static let hrm = HRMProcess.binary.path

    /// Bash for the scripts: `watchdog PID` kills PID after 40 s, so that a hang fails the test
    /// instead of stalling it, and `end_watchdog` (appended to every script) lets it go.
    static let watchdog = """
        watchdog() { (sleep 40; kill -KILL "$1") > /dev/null 2>&1 & WATCHDOG=$!; }
        end_watchdog() { [ -n "$WATCHDOG" ] && { pkill -P "$WATCHDOG"; kill "$WATCHDOG"; } 2>/dev/null; true; }

        """

    /// Runs `script` under hrm-sim playing `scenario`, with `$HRM` the binary, `$OUT` and `$ERR`
    /// files for hrm's output, `$STATUS` for its exit status and `watchdog` at hand; returns
    /// those three.
    static func underSim(_ scenario: String, log: String, _ script: String) async throws -> (
        status: Int32?, stdout: String, stderr: String
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (out, err, status) = (
            directory.appendingPathComponent("out").path, directory.appendingPathComponent("err").path,
            directory.appendingPathComponent("status").path
        )
        let result = try await HRMProcess.runUnderSim(
            scenario, [], log: log,
            shell: "HRM='\(hrm)'; OUT='\(out)'; ERR='\(err)'; STATUS='\(status)'; touch \"$OUT\"\n"
                + watchdog + script + "\nend_watchdog")
        #expect(result.status == 0, "the script itself: \(result.stderr)")
        let code = (try? String(contentsOfFile: status, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (
            code, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        )
    }

    /// Waits (15 s at most) until hrm's output shows a measurement.
    static let untilMeasuring =
        #"for _ in $(seq 150); do grep -q '"measurement"' "$OUT" && break; sleep 0.1; done"#

    /// SIGHUP (the terminal went away) stops hrm as SIGTERM does: released, disconnected, exit 0.
    @Test func sighupStopsCleanly() async throws {
        let log = WatchBinaryTests.temporary("hup.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let (status, stdout, _) = try await Self.underSim(
            "basic", log: log,
            """
            "$HRM" watch --json Polar > "$OUT" 2> "$ERR" & pid=$!
            \(Self.untilMeasuring)
            kill -HUP $pid; wait $pid; echo $? > "$STATUS"
            """)
        #expect(status == 0)
        #expect(WatchBinaryTests.lines(stdout).last?["state"] as? String == "stopped")
        #expect(try WatchBinaryTests.cleanup(log) == ["AcquireNotify", "acquire-released", "Disconnect"])
    }

    /// The system bus dies under hrm: a clear message and exit 69, not "retrying" forever.
    @Test func losingTheBusEndsTheRunWithExit69() async throws {
        let log = WatchBinaryTests.temporary("busloss.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let (status, stdout, stderr) = try await Self.underSim(
            "basic", log: log,
            """
            "$HRM" watch --json Polar > "$OUT" 2> "$ERR" & pid=$!
            watchdog $pid
            \(Self.untilMeasuring)
            socket=${DBUS_SYSTEM_BUS_ADDRESS#unix:path=}; socket=${socket%%,*}
            pkill -f "dbus-daemon --config-file=$(dirname "$socket")/bus.conf"
            wait $pid; echo $? > "$STATUS"
            """)
        #expect(status == 69, "\(stderr)")
        #expect(stderr.contains("lost the connection to the system bus"))
        let last = WatchBinaryTests.lines(stdout).last
        #expect(last?["type"] as? String == "error")
        #expect(last?["code"] as? String == "disconnected")
    }

    static func scenario(
        _ name: String, _ device: String, policy: String = "open", interval: Double = 0.2
    ) throws -> String {
        let path = WatchBinaryTests.temporary(name)
        try """
        {"busPolicy": "\(policy)",
         "devices": [{"address": "D2:4B:7E:10:20:30", "name": "Polar H10", "uuids": ["180d"], "known": true,
                      "heartRate": {"interval": \(interval)}\(device)}]}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A policy that refuses only the notification calls is not "not in the bluetooth group":
    /// the message names the call, and the strap hrm connected is disconnected before it exits.
    @Test func aPolicyThatRefusesNotificationsNamesTheCall() async throws {
        let log = WatchBinaryTests.temporary("deny-notify.jsonl")
        let scenario = WatchBinaryTests.temporary("deny-notify.json")
        defer {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: scenario)
        }
        try #"""
        {"busPolicy": "deny-notify",
         "devices": [{"address": "D2:4B:7E:10:20:30", "name": "Polar H10", "uuids": ["180d"], "known": true}]}
        """#.write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try await HRMProcess.runUnderSim(scenario, ["watch", "--json", "Polar"], log: log)
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("call AcquireNotify") || result.stderr.contains("call StartNotify"))
        #expect(try WatchBinaryTests.calls(log).last == "Disconnect", "the strap is not left connected")
    }

    /// AcquireNotify never answered: the failure names the call, and the strap hrm connected is
    /// disconnected before it exits.
    @Test func notificationsThatNeverComeLeaveNoStrapConnected() async throws {
        let log = WatchBinaryTests.temporary("acquire-stall.jsonl")
        let scenario = try Self.scenario(
            "acquire-stall.json", #", "callFailures": {"AcquireNotify": [{"stall": true}]}"#)
        defer {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: scenario)
        }
        let result = try await HRMProcess.runUnderSim(scenario, ["watch", "--json", "Polar"], log: log)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("did not answer AcquireNotify within"), "\(result.stderr)")
        #expect(try WatchBinaryTests.calls(log).last == "Disconnect", "the strap is not left connected")
    }

    /// AcquireNotify handing out a pipe: said once, and the run goes on by StartNotify (it
    /// looped connect/disconnect with no measurement).
    @Test func aWrongNotifyDescriptorFallsBackToStartNotify() async throws {
        let scenario = try Self.scenario("pipe-fd.json", #", "acquireFd": "pipe""#)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        let result = try await HRMProcess.runUnderSim(scenario, ["watch", "--json", "--count", "3", "Polar"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        let fallback = events.filter { $0["code"] as? String == "acquire_notify_failed" }
        #expect(fallback.count == 1)
        #expect((fallback.first?["message"] as? String)?.contains("pipe") == true)
        #expect(events.filter { $0["type"] as? String == "measurement" }.count == 3)
        #expect(events.filter { $0["state"] as? String == "connecting" }.count == 1, "no reconnect loop")
    }

    /// A notification whose Value is not bytes is reported and counted as malformed.
    @Test func aValueOfTheWrongTypeIsMalformed() async throws {
        let scenario = try Self.scenario("string-value.json", #", "acquireNotify": false, "valueType": "s""#)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        let result = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--duration", "3", "Polar"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        let malformed = events.filter { $0["code"] as? String == "malformed_value" }
        #expect(!malformed.isEmpty)
        #expect((malformed.first?["message"] as? String)?.contains("D-Bus type s") == true)
        let summary = events.last?["detail"] as? String
        #expect(summary?.contains("malformed notification") == true, "\(summary ?? "")")
    }

    /// A strap that does not answer one read of its info delays the info line by the read's
    /// short limit, not by a call timeout per read, and says what it did not give; the
    /// measurements do not wait for it (hrm subscribes before it reads).
    @Test func aReadThatNeverAnswersDelaysNothingMuch() async throws {
        let scenario = try Self.scenario(
            "read-stall.json", #", "callFailures": {"ReadValue": [{"stall": true}]}"#)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        // 5 per second: 25 take longer than the read's 3 s limit.
        let result = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--count", "25", "Polar"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        let missing = events.first { $0["code"] as? String == "info_unavailable" }
        #expect((missing?["message"] as? String)?.contains("did not answer ReadValue within 3 s") == true)
        #expect(events.filter { $0["type"] as? String == "measurement" }.count == 25)
        let firstMeasurement = try #require(events.firstIndex { $0["type"] as? String == "measurement" })
        let infoLine = try #require(events.firstIndex { $0["type"] as? String == "info" })
        #expect(firstMeasurement < infoLine, "the stalled read held the stream up")
        // Which deadline ended the read is in the message above (the read's 3 s, not a call's
        // 10 s); how long it took in wall time is not checked.
    }

    /// Ctrl-C while reset-energy's write waits: not reset (exit 1, said so), and disconnected.
    @Test func anInterruptedResetLeavesNoStrapConnected() async throws {
        let log = WatchBinaryTests.temporary("write-stall.jsonl")
        let scenario = try Self.scenario(
            "write-stall.json", #", "callFailures": {"WriteValue": [{"stall": true}]}"#)
        defer {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: scenario)
        }
        let (status, _, stderr) = try await Self.underSim(
            scenario, log: log,
            """
            "$HRM" reset-energy Polar > "$OUT" 2> "$ERR" & pid=$!
            watchdog $pid
            for _ in $(seq 200); do grep -q call-stalled "$LOG_PATH" && break; sleep 0.05; done
            kill -INT $pid; wait $pid; echo $? > "$STATUS"
            """.replacingOccurrences(of: "$LOG_PATH", with: log))
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("interrupted; the counter was not reset"), "\(stderr)")
        #expect(try WatchBinaryTests.calls(log).last == "Disconnect", "the strap is not left connected")
    }

    /// Stdout that nobody reads (a full pipe) must not keep Ctrl-C from working: hrm releases,
    /// disconnects and exits, even though its last lines cannot be written.
    @Test(arguments: [true, false])
    func aStalledReaderDoesNotBlockTheStop(acquire: Bool) async throws {
        let log = WatchBinaryTests.temporary("stalled-reader.jsonl")
        let scenario = try Self.scenario(
            "stalled-reader.json", #", "acquireNotify": \#(acquire)"#, interval: 0.005)
        let fifo = WatchBinaryTests.temporary("fifo")
        defer {
            for path in [log, scenario, fifo] { try? FileManager.default.removeItem(atPath: path) }
        }
        let (status, _, stderr) = try await Self.underSim(
            scenario, log: log,
            """
            mkfifo '\(fifo)'; exec 3<>'\(fifo)'
            "$HRM" watch --json Polar > '\(fifo)' 2> "$ERR" & pid=$!
            watchdog $pid
            # 600 lines are more than the pipe holds: hrm is blocked writing by then.
            for _ in $(seq 300); do [ "$(grep -c '"notify"' '\(log)')" -ge 600 ] && break; sleep 0.1; done
            kill -TERM $pid; wait $pid; echo $? > "$STATUS"
            """)
        #expect(status == 0, "\(stderr)")
        let calls = try WatchBinaryTests.calls(log)
        #expect(calls.last == "Disconnect", "\(calls.suffix(3))")
    }

    /// A reader that stops reading for a while: once it reads again, hrm says for how long
    /// output was stalled (notifications meanwhile may be lost), and the stream goes on.
    @Test func aStallOfTheReaderIsReported() async throws {
        let log = WatchBinaryTests.temporary("stall-report.jsonl")
        let scenario = try Self.scenario("stall-report.json", "", interval: 0.005)
        let fifo = WatchBinaryTests.temporary("fifo")
        defer {
            for path in [log, scenario, fifo] { try? FileManager.default.removeItem(atPath: path) }
        }
        let (status, stdout, stderr) = try await Self.underSim(
            scenario, log: log,
            """
            mkfifo '\(fifo)'; exec 3<>'\(fifo)'
            "$HRM" watch --json --duration 12 Polar > '\(fifo)' 2> "$ERR" & pid=$!
            watchdog $pid
            # The pipe fills (600 lines), stays full for 3 s, then is read to the end.
            for _ in $(seq 300); do [ "$(grep -c '"notify"' '\(log)')" -ge 600 ] && break; sleep 0.1; done
            sleep 3
            cat <&3 > "$OUT" & reader=$!
            wait $pid; echo $? > "$STATUS"
            exec 3>&-; sleep 0.5; kill $reader 2>/dev/null
            """)
        #expect(status == 0, "\(stderr)")
        let stall = WatchBinaryTests.lines(stdout).first { $0["code"] as? String == "output_stalled" }
        #expect((stall?["message"] as? String)?.contains("standard output took nothing for") == true)
        #expect(stderr.contains("standard output took nothing for"))
    }

    @Test(arguments: [["watch", ""], ["reset-energy", ""]])
    func anEmptyDeviceIsAUsageError(arguments: [String]) {
        #expect(throws: (any Error).self) { try HRM.parseAsRoot(arguments) }
    }
}

/// A hostile org.bluez, played by a small python3-dbus service on hrm-sim's private bus (with
/// hrm-sim's own bluetoothd switched off): it owns the name and then never answers (`silent`), or
/// leaves the bus when asked (`vanish`).
@Suite struct HostileBlueZTests {
    static let service = #"""
        import os, sys, dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        mode, log = sys.argv[1], sys.argv[2]
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
        name = dbus.service.BusName("org.bluez", bus)
        def note(text):
            with open(log, "a") as f: f.write(text + "\n")
        class Root(dbus.service.Object):
            @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}",
                                 async_callbacks=("ok", "fail"))
            def GetManagedObjects(self, ok, fail):
                note("GetManagedObjects")
                if mode == "vanish": os._exit(0)
        Root(bus, "/")
        note("ready")
        GLib.MainLoop().run()
        """#

    /// hrm against the service in `mode`; `then` runs once it has asked for the objects.
    static func run(_ mode: String, then: String) async throws -> (
        status: Int32?, stdout: String, stderr: String
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try service.write(toFile: path("service.py"), atomically: true, encoding: .utf8)
        let script = """
            LOG='\(path("log"))'; OUT='\(path("out"))'; ERR='\(path("err"))'
            /usr/bin/python3 '\(path("service.py"))' \(mode) "$LOG" & service=$!
            for _ in $(seq 100); do grep -q ready "$LOG" 2>/dev/null && break; sleep 0.05; done
            '\(HRMProcess.binary.path)' watch --json Polar > "$OUT" 2> "$ERR" & pid=$!
            watchdog $pid
            for _ in $(seq 100); do grep -q GetManagedObjects "$LOG" && break; sleep 0.05; done
            \(then)
            wait $pid; echo $? > '\(path("status"))'
            kill $service 2>/dev/null; end_watchdog
            """
        let result = try await HRMProcess.runUnderSim(
            "no-bluetoothd", [], shell: HostileWorldTests.watchdog + script)
        #expect(result.status == 0, "the script itself: \(result.stderr)")
        let status = (try? String(contentsOfFile: path("status"), encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (
            status, (try? String(contentsOfFile: path("out"), encoding: .utf8)) ?? "",
            (try? String(contentsOfFile: path("err"), encoding: .utf8)) ?? ""
        )
    }

    /// Ctrl-C while hrm waits for bluetoothd's first answer is a stop: exit 0, `stopped`.
    @Test func ctrlCDuringAStartUpCallIsAStop() async throws {
        let (status, stdout, stderr) = try await Self.run("silent", then: "kill -INT $pid")
        #expect(status == 0, "\(stderr)")
        #expect(!stderr.contains("cancelled"), "\(stderr)")
        #expect(WatchBinaryTests.lines(stdout).last?["state"] as? String == "stopped")
    }

    /// bluetoothd leaving the bus while a call waits: said so, exit 69 (not "did not answer in
    /// time", exit 1).
    @Test func bluetoothdLeavingDuringACallIsUnavailable() async throws {
        let (status, stdout, stderr) = try await Self.run("vanish", then: "")
        #expect(status == 69, "\(stderr)")
        #expect(stderr.contains("bluetoothd went away during GetManagedObjects"), "\(stderr)")
        #expect(WatchBinaryTests.lines(stdout).last?["code"] as? String == "bluetoothd_not_running")
    }
}
