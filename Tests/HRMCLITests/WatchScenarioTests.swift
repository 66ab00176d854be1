import Foundation
import HeartRate
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm watch`, the built binary, against hrm-sim's scenarios: choosing a strap, Bluetooth being
/// unavailable, routine connect failures, drops in both GATT cache modes, energy reset while
/// watching, a closed pipe.
@Suite struct WatchScenarioTests {
    static func events(_ output: String) -> [[String: Any]] { WatchBinaryTests.lines(output) }

    static func measurements(_ output: String) -> [[String: Any]] {
        events(output).filter { $0["type"] as? String == "measurement" }
    }

    static func log(_ path: String) throws -> [[String: Any]] {
        WatchBinaryTests.lines(try String(contentsOfFile: path, encoding: .utf8))
    }

    @Test(arguments: [
        ("C0:FF:EE:00:00:02", "C0:FF:EE:00:00:02", "TICKR 1A2B"),
        ("hrm-pro", "C0:FF:EE:00:00:01", "HRM-Pro:123456"),
        ("tickr", "C0:FF:EE:00:00:02", "TICKR 1A2B"),
    ])
    func choosesAStrapByAddressOrName(wanted: String, address: String, name: String) async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--json", "--count", "2", wanted])
        #expect(result.status == 0, "\(result.stderr)")
        let events = Self.events(result.stdout)
        let info = events.first { $0["type"] as? String == "info" }
        #expect(info?["name"] as? String == name)
        #expect(Self.measurements(result.stdout).count == 2)
        for event in events.dropFirst() { #expect(event["device"] as? String == address) }
    }

    @Test func withoutADeviceTheStrongestMonitorIsChosen() async throws {
        let result = try await HRMProcess.runUnderSim("two-straps", ["watch", "--json", "--count", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let info = Self.events(result.stdout).first { $0["type"] as? String == "info" }
        #expect(info?["device"] as? String == "C0:FF:EE:00:00:01", "the Garmin has the strongest signal")
    }

    /// The strongest monitor is chosen after 3 s even when bluetoothd reports nothing more about
    /// it (a strap without RSSI): not at the end of --scan-timeout.
    /// The --scan-timeout is past the test's time limit (which only proves "not hung"): a choice
    /// made at its end would fail the test, without a bound on wall time.
    @Test(.timeLimit(.minutes(2))) func theStrongestIsChosenWithoutFurtherReports() async throws {
        let scenario = WatchBinaryTests.temporary("quiet.json")
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        try #"{"devices": [{"address": "D2:4B:7E:10:20:30", "name": "Quiet Strap", "uuids": ["180d"]}]}"#
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--count", "1", "--scan-timeout", "600"])
        #expect(result.status == 0, "\(result.stderr)")
        let states = Self.events(result.stdout).compactMap { $0["state"] as? String }
        #expect(Array(states.prefix(3)) == ["scanning", "connecting", "connected"], "\(states)")
    }

    @Test(arguments: [
        ("adapter-off", Int32(69), "adapter_powered_off", "--power-on"),
        ("no-adapter", 69, "no_adapter", "no Bluetooth adapter"),
        ("no-bluetoothd", 69, "bluetoothd_not_running", "bluetoothd is not running"),
        ("access-denied", 77, "access_denied", "'bluetooth' group"),
        ("rfkill", 69, "adapter_blocked", "hint: unblock it with: rfkill unblock bluetooth"),
    ])
    func unavailableBluetooth(scenario: String, status: Int32, code: String, message: String) async throws {
        let text = try await HRMProcess.runUnderSim(scenario, ["watch", "--scan-timeout", "1", "Polar"])
        #expect(text.status == status)
        #expect(text.stderr.contains(message), "\(text.stderr)")
        #expect(text.stdout.isEmpty)

        let json = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--scan-timeout", "1", "Polar"])
        #expect(json.status == status)
        let error = Self.events(json.stdout).last
        #expect(error?["type"] as? String == "error")
        #expect(error?["code"] as? String == code)
    }

    /// Blocked through rfkill, --power-on cannot help: hrm says what can, and does not try.
    @Test func aBlockedAdapterIsNotPoweredOn() async throws {
        let log = WatchBinaryTests.temporary("rfkill.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim("rfkill", ["watch", "--power-on", "Polar"], log: log)
        #expect(result.status == 69)
        #expect(result.stderr.contains("blocked through rfkill"), "\(result.stderr)")
        #expect(!result.stderr.contains("--power-on"), "not the hint that cannot work")
        #expect(try !WatchBinaryTests.calls(log).contains("Connect"))
    }

    @Test func powerOnWhenAsked() async throws {
        let result = try await HRMProcess.runUnderSim(
            "adapter-off", ["watch", "--json", "--power-on", "--count", "1", "Polar"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.measurements(result.stdout).count == 1)
    }

    @Test func aConnectThatAbortsOnceIsRetried() async throws {
        let log = WatchBinaryTests.temporary("abort.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "connect-abort", ["watch", "--json", "--count", "2", "Shy"], log: log)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.measurements(result.stdout).count == 2)
        let entries = try Self.log(log)
        #expect(
            entries.filter { $0["event"] as? String == "call" && $0["member"] as? String == "Connect" }.count
                == 2)
        #expect(
            entries.contains {
                $0["event"] as? String == "error"
                    && ($0["message"] as? String)?.contains("le-connection-abort") == true
            })
    }

    /// A Heart Rate Measurement's heart rate and RR intervals, `bpm [rr, ...]`, from hrm-sim's hex
    /// (what it sent; the decoder is only the means of reading it back).
    static func frame(hex: String) -> String {
        guard let bytes = try? HexPayload.parse(hex), let frame = try? HeartRateMeasurement(decoding: bytes)
        else { return "?" }
        return "\(frame.heartRate) \(frame.rrIntervals.ticks.map(Int.init))"
    }

    /// The link drops for 2 s after the 8th notification; 14 measurements span it. Every
    /// notification sent is printed once, in order, across the drop (how soon the stream is back
    /// is for `make bench-first-beat`, not a wall-clock bound here).
    @Test(arguments: ["drops", "drops-nocache"])
    func dropAndReconnectLoseNothing(scenario: String) async throws {
        let log = WatchBinaryTests.temporary("\(scenario).jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--count", "14", "Flaky"], log: log)
        #expect(result.status == 0, "\(result.stderr)")
        let states = Self.events(result.stdout).compactMap { $0["state"] as? String }
        #expect(
            states == [
                "scanning", "connecting", "connected", "disconnected", "reconnecting", "connected", "stopped",
            ])

        let entries = try Self.log(log)
        let sent = entries.filter { $0["event"] as? String == "notify" }
        let printed = Self.measurements(result.stdout)
        #expect(printed.count == 14)
        // One more may have been on its way as hrm stopped at the 14th.
        #expect(sent.count == 14 || sent.count == 15, "\(sent.count) sent")
        // Printed in the order sent, none twice and none missing (not told by receive times: a
        // loaded machine reads a few queued notifications within one millisecond).
        let printedFrames = printed.map { "\($0["bpm"] as? Int ?? -1) \($0["rr_1024"] as? [Int] ?? [])" }
        let sentFrames = sent.prefix(printed.count).map { Self.frame(hex: $0["hex"] as? String ?? "") }
        #expect(printedFrames == sentFrames)
        let dropped = try #require(entries.first { $0["event"] as? String == "drop" }?["t"] as? Double)
        #expect(sent.filter { ($0["t"] as? Double ?? 0) <= dropped }.count == 8, "the drop follows the 8th")
    }

    /// The adapter goes off after the 5th notification and on 3 s later; bluetoothd restarts
    /// after the 10th, for 2 s. Once watching, both are pauses: hrm keeps trying and streams again
    /// after each.
    @Test func adapterPowerCycleAndBluetoothdRestartArePauses() async throws {
        let log = WatchBinaryTests.temporary("power-cycle.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "power-cycle", ["watch", "--json", "--count", "14"], log: log)
        #expect(result.status == 0, "\(result.stderr)")
        let states = Self.events(result.stdout).compactMap { $0["state"] as? String }
        #expect(states.filter { $0 == "connected" }.count == 3, "\(states)")
        #expect(states.last == "stopped")
        #expect(Self.measurements(result.stdout).count == 14)
        let details = Self.events(result.stdout).compactMap { $0["detail"] as? String }
        #expect(details.contains { $0.contains("powered off") })
        #expect(details.contains { $0.contains("bluetoothd is not running") })
        let entries = try Self.log(log)
        let back = try #require(
            entries.first { $0["event"] as? String == "restart" && $0["phase"] as? String == "up" }?["t"]
                as? Double)
        let resumed = entries.filter { $0["event"] as? String == "notify" }.compactMap { $0["t"] as? Double }
            .first { $0 > back }
        // The backoff (5 s by then) is cut short when bluetoothd comes back: about 0.5 s here,
        // bounded below the backoff so that a loaded machine cannot break it.
        #expect(
            (resumed ?? 99) < back + 4.0,
            "streaming again before the 5 s backoff ran out, after bluetoothd's return at \(back) s: \(resumed ?? -1)"
        )
    }

    @Test func energyResetWhileWatching() async throws {
        let hrm = HRMProcess.binary.path
        let script = """
            \(hrm) watch --json --count 6 Energy > "$OUT" &
            # The reset comes once the first measurement is out (at most 15 s of waiting).
            for _ in $(seq 150); do grep -q '"measurement"' "$OUT" && break; sleep 0.1; done
            \(hrm) reset-energy Energy || exit 9
            wait
            """
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("energy-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("watch.out").path
        let result = try await HRMProcess.runUnderSim("uint16-energy", [], shell: "OUT=\(out); " + script)
        #expect(result.status == 0, "\(result.stderr)")
        let printed = Self.measurements(try String(contentsOfFile: out, encoding: .utf8))
        #expect(printed.allSatisfy { $0["format"] as? String == "uint16" })
        let energy = printed.compactMap { $0["energy_kj"] as? Int }
        #expect(energy.first.map { $0 >= 65500 } == true)
        #expect(energy.last.map { $0 < 100 } == true, "reset to 0 and counting again: \(energy)")
    }

    @Test func aClosedPipeStopsCleanly() async throws {
        let log = WatchBinaryTests.temporary("head.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.runUnderSim(
            "basic", [], log: log,
            shell: "set -o pipefail; \(hrm) watch --json Polar | head -5")
        #expect(result.status == 0, "hrm exits 0 when the reader goes: \(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 5)
        #expect(result.stderr.isEmpty)
        #expect(try WatchBinaryTests.cleanup(log) == ["AcquireNotify", "acquire-released", "Disconnect"])
    }
}
