import Foundation
import Testing

/// `hrm scan` as a built binary against the simulated BlueZ.
@Suite struct ScanBinaryTests {
    @Test func listsMonitorsOnly() async throws {
        let result = try await HRMProcess.runUnderSim("two-straps", ["scan", "--timeout", "1.5"])
        #expect(result.status == 0)
        #expect(result.stdoutLines.count == 2)
        #expect(result.stdout.contains("C0:FF:EE:00:00:01   -49 dBm  HRM-Pro:123456"))
        #expect(result.stdout.contains("TICKR 1A2B"))
        #expect(!result.stdout.contains("KICKR"), "a bike computer is not a heart-rate monitor")
    }

    /// --csv (or --format csv): a header, then a row per device; a name with a comma or a quote
    /// is quoted as RFC 4180 says.
    @Test(arguments: [["--csv"], ["--format", "csv"]])
    func csvRows(option: [String]) async throws {
        let scenario = WatchBinaryTests.temporary("csv.json")
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        try
            #"{"devices": [{"address": "D2:4B:7E:10:20:30", "name": "Strap, \"A\"", "rssi": -50, "uuids": ["180d"]}]}"#
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try await HRMProcess.runUnderSim(scenario, ["scan", "--timeout", "1"] + option)
        #expect(result.status == 0, "\(result.stderr)")
        try #require(result.stdoutLines.count == 2)
        #expect(result.stdoutLines[0] == "time,address,name,rssi,services,connected")
        #expect(result.stdoutLines[1].hasSuffix(#",D2:4B:7E:10:20:30,"Strap, ""A""",-50,180d,false"#))
    }

    @Test func jsonAndAll() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["scan", "--json", "--all", "--timeout", "1.5"])
        #expect(result.status == 0)
        #expect(result.stdoutLines.count == 3)
        for line in result.stdoutLines {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["type"] as? String == "device")
            #expect((object["time"] as? String)?.hasSuffix("Z") == true)
            #expect(object["address"] as? String == object["device"] as? String)
            #expect(object["connected"] as? Bool == false)
        }
        #expect(result.stdout.contains(#""name":"KICKR BIKE","rssi":-40,"services":["1826","1818"]"#))
    }

    @Test func unknownRSSIIsNull() async throws {
        let result = try await HRMProcess.runUnderSim(
            "lab", ["scan", "--json", "--adapter", "hci0", "--timeout", "1"])
        #expect(result.status == 0)
        #expect(result.stdout.contains(#""name":"Lab HRM","rssi":null,"services":["180d","180f"]"#))
    }

    @Test(arguments: [
        ("adapter-off", Int32(69), "--power-on"), ("no-adapter", 69, "no Bluetooth adapter"),
        ("no-bluetoothd", 69, "bluetoothd is not running"), ("access-denied", 77, "'bluetooth' group"),
    ])
    func unavailableBluetooth(scenario: String, status: Int32, message: String) async throws {
        let result = try await HRMProcess.runUnderSim(scenario, ["scan", "--timeout", "1"])
        #expect(result.status == status)
        #expect(result.stderr.contains(message))
        #expect(result.stdout.isEmpty)
    }

    /// On a terminal (a pty from `script`): a table redrawn in place, strongest first, under a
    /// timer that advances while nothing new is found.
    @Test func liveTableWithATimerOnATerminal() async throws {
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.runUnderSim(
            "two-straps", [], shell: "script -qec '\(hrm) scan --timeout 2' /dev/null")
        #expect(result.status == 0, "\(result.stderr)")
        let screen = result.stdout.replacingOccurrences(of: "\r", with: "")
        #expect(screen.contains("\u{1B}[2K"), "lines are cleared and redrawn")
        #expect(screen.contains("\u{1B}[4A"), "the cursor goes back up over the previous table")
        let timers = screen.split(separator: "\n").filter { $0.contains("scanning ") }
        #expect(Set(timers).count >= 3, "the timer advances: \(timers)")
        // Once over, the header says so (#26 item 13): not a timer stuck at its end.
        let last = try #require(screen.range(of: "scanned 2.0 s, 2 found", options: .backwards))
        #expect(!screen[last.upperBound...].contains("scanning"))
        let finalTable = screen[last.upperBound...]
        let pro = try #require(finalTable.range(of: "HRM-Pro:123456"))
        let tickr = try #require(finalTable.range(of: "TICKR 1A2B"))
        #expect(pro.lowerBound < tickr.lowerBound, "sorted by signal: -49 dBm before -71 dBm")
    }

    /// `scan --all` marks the heart-rate monitors among the other devices (#26 item 13).
    @Test func allMarksTheHeartRateMonitors() async throws {
        let result = try await HRMProcess.runUnderSim("two-straps", ["scan", "--all", "--timeout", "1.5"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("HRM-Pro:123456  ♥ heart rate") }, "\(lines)")
        #expect(lines.contains { $0.contains("TICKR 1A2B  ♥ heart rate") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("KICKR BIKE") }, "\(lines)")
        // Without --all every device listed is one: no mark.
        let monitors = try await HRMProcess.runUnderSim("two-straps", ["scan", "--timeout", "1"])
        #expect(!monitors.stdout.contains("♥"), "\(monitors.stdout)")
    }

    @Test func jsonErrorEvent() async throws {
        let result = try await HRMProcess.runUnderSim("no-bluetoothd", ["scan", "--json", "--timeout", "1"])
        #expect(result.status == 69)
        #expect(result.stdout.hasPrefix(#"{"type":"error","time":"#))
        #expect(result.stdout.contains(#""code":"bluetoothd_not_running""#))
    }

    @Test func powerOnWhenAsked() async throws {
        let result = try await HRMProcess.runUnderSim(
            "adapter-off", ["scan", "--power-on", "--timeout", "1"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Polar H10 7E102030"))
    }

    @Test func noneFoundExitsOneWithAHint() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bike-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(
            #"{"devices":[{"address":"C0:FF:EE:00:00:03","name":"KICKR BIKE","rssi":-40,"uuids":["1826"]}]}"#
                .utf8
        )
        .write(to: file)
        let none = try await HRMProcess.runUnderSim(file.path, ["scan", "--timeout", "1"])
        #expect(none.status == 1)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr.contains("no heart-rate monitor found"))
        #expect(none.stderr.contains("moistened electrodes"))
    }

    @Test func unknownAdapter() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["scan", "--timeout", "1", "--adapter", "hci7"])
        #expect(result.status == 69)
        #expect(result.stderr.contains("no adapter 'hci7'"))
    }

    /// A scan that runs its time stops discovery once: the command's own stop and its stream's
    /// do not both go out.
    @Test func aScanStopsDiscoveryOnce() async throws {
        let log = WatchBinaryTests.temporary("scan-once.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "basic", ["scan", "--json", "--timeout", "1"], log: log)
        #expect(result.status == 0)
        #expect(try WatchBinaryTests.calls(log).filter { $0 == "StopDiscovery" }.count == 1)
    }

    /// Ctrl-C ends the scan early: discovery stopped, the devices found kept, exit 0.
    @Test(.timeLimit(.minutes(2))) func sigtermEndsTheScanEarly() async throws {
        let log = WatchBinaryTests.temporary("scan-term.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        // --timeout is past the time limit: the signal is what ends the scan.
        let result = try await WatchBinaryTests.terminated(
            "basic", ["scan", "--json", "--timeout", "600"], log: log, once: #""type":"device""#)
        #expect(result.status == 0, "a monitor was found")
        #expect(WatchBinaryTests.lines(result.stdout).first?["name"] as? String == "Polar H10 7E102030")
        #expect(try WatchBinaryTests.calls(log).contains("StopDiscovery"))
    }
}
