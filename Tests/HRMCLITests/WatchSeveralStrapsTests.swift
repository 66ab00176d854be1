import BrokerSupport
import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm watch DEVICE DEVICE...` and `--all`, the built binary under hrm-sim.
@Suite struct WatchSeveralStrapsTests {
    static func events(_ output: String) -> [[String: Any]] { WatchBinaryTests.lines(output) }

    static func measurements(_ output: String, of device: String) -> [[String: Any]] {
        events(output).filter { $0["type"] as? String == "measurement" && $0["device"] as? String == device }
    }

    @Test func twoStrapsByAddressAndByName() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--json", "--count", "6", "C0:FF:EE:00:00:01", "tickr"])
        #expect(result.status == 0, "\(result.stderr)")
        let garmin = Self.measurements(result.stdout, of: "C0:FF:EE:00:00:01")
        let wahoo = Self.measurements(result.stdout, of: "C0:FF:EE:00:00:02")
        #expect(garmin.count + wahoo.count == 6, "--count counts every strap's measurements")
        #expect(garmin.count >= 2 && wahoo.count >= 2, "\(garmin.count) and \(wahoo.count)")
        // The Wahoo sends UINT16 values near 88 bpm, the Garmin UINT8 near 134.
        #expect(wahoo.allSatisfy { $0["format"] as? String == "uint16" })
        #expect(garmin.allSatisfy { ($0["bpm"] as? Int ?? 0) > 110 })
        let events = Self.events(result.stdout)
        let infos = events.filter { $0["type"] as? String == "info" }.compactMap { $0["name"] as? String }
        #expect(Set(infos) == ["HRM-Pro:123456", "TICKR 1A2B"])
        let summaries = events.filter { $0["type"] as? String == "summary" }.compactMap {
            $0["device"] as? String
        }
        #expect(summaries == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
        #expect(events.last?["state"] as? String == "stopped")
        #expect(events.filter { $0["state"] as? String == "stopped" }.count == 1)
    }

    /// `--all`: the two heart-rate monitors, not the bike computer beside them.
    @Test func allWatchesEveryMonitorFound() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--json", "--all", "--count", "4"])
        #expect(result.status == 0, "\(result.stderr)")
        let devices = Set(
            Self.events(result.stdout).filter { $0["type"] as? String == "info" }.compactMap {
                $0["device"] as? String
            })
        #expect(devices == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
    }

    /// A strap that is not around is reported, and the others are watched.
    @Test func aMissingStrapIsReportedAndTheOthersWatched() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--json", "--count", "2", "--scan-timeout", "1", "hrm-pro", "polar"])
        #expect(result.status == 0, "\(result.stderr)")
        let errors = Self.events(result.stdout).filter { $0["type"] as? String == "error" }
        #expect(errors.first?["code"] as? String == "device_not_found")
        #expect((errors.first?["message"] as? String)?.contains("'polar'") == true)
        #expect(result.stderr.contains("no 'polar' found in 1.0 s: watching the others"), "\(result.stderr)")
        #expect(Self.measurements(result.stdout, of: "C0:FF:EE:00:00:01").count == 2)
    }

    /// A strap that comes later (a teammate who arrives late) is found by the session's later
    /// looks and watched from then on, beside the one already streaming. It arrives after the
    /// first strap's 5th notification (so after the first scan, however slow the machine), and hrm
    /// runs until it has streamed (events, not a duration).
    @Test func aStrapThatComesLaterIsWatchedToo() async throws {
        let scenario = WatchBinaryTests.temporary("late-strap.json")
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        try """
        {"devices": [
          {"address": "C0:FF:EE:00:00:01", "name": "HRM-Pro:123456", "uuids": ["180d"], "heartRate": {"bpm": 134}},
          {"address": "C0:FF:EE:00:00:02", "name": "TICKR 1A2B", "uuids": ["180d"], "appearAt": 3600,
           "heartRate": {"bpm": 88}}],
         "events": [{"afterNotifications": 5, "type": "device-appear", "device": "C0:FF:EE:00:00:02"}]}
        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--scan-timeout", "1", "hrm-pro", "tickr"], patience: .seconds(90)
        ) { stdout in
            Self.measurements(stdout, of: "C0:FF:EE:00:00:02").count >= 2
                && Self.measurements(stdout, of: "C0:FF:EE:00:00:01").count >= 10
        }
        #expect(result.status == 0, "\(result.stderr)")
        let notFound = Self.events(result.stdout).first { $0["code"] as? String == "device_not_found" }
        #expect((notFound?["message"] as? String)?.contains("'tickr'") == true, "\(result.stdout)")
        let late = Self.measurements(result.stdout, of: "C0:FF:EE:00:00:02")
        #expect(late.count >= 2, "\(late.count) measurements of the strap that came later")
        #expect(Self.measurements(result.stdout, of: "C0:FF:EE:00:00:01").count >= 10)
        let summaries = Self.events(result.stdout).filter { $0["type"] as? String == "summary" }
        #expect(
            Set(summaries.compactMap { $0["device"] as? String }) == [
                "C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02",
            ])
    }

    @Test func noneFoundIsExit1() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--scan-timeout", "1", "polar", "suunto"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("none of 'polar', 'suunto' found in 1.0 s"), "\(result.stderr)")
        // What was there instead, strongest first (#26 item 10); the bike computer, not a heart-rate
        // monitor, is not among them.
        #expect(
            result.stderr.contains(
                "; heart-rate monitors seen: HRM-Pro:123456 (C0:FF:EE:00:00:01), TICKR 1A2B (C0:FF:EE:00:00:02)"
            ),
            "\(result.stderr)")
    }

    /// `ADAPTER/DEVICE`: the adapter named per strap; one that does not exist is an error before
    /// anything connects.
    @Test func anAdapterPerStrap() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--json", "--count", "4", "hci0/C0:FF:EE:00:00:01", "hci0/tickr"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.measurements(result.stdout, of: "C0:FF:EE:00:00:02").count >= 1)
        let missing = try await HRMProcess.runUnderSim("two-straps", ["watch", "hci0/hrm-pro", "hci7/tickr"])
        #expect(missing.status == 69, "\(missing.stderr)")
        #expect(missing.stderr.contains("hci7"), "\(missing.stderr)")
    }

    /// Into a pipe, each line names its strap.
    @Test func textLinesNameTheirStrap() async throws {
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--count", "4", "hrm-pro", "tickr"])
        #expect(result.status == 0, "\(result.stderr)")
        let measurementLines = result.stdoutLines.filter { $0.contains(" bpm  contact") }
        #expect(measurementLines.count == 4)
        for line in measurementLines {
            #expect(line.contains("C0:FF:EE:00:00:01") || line.contains("C0:FF:EE:00:00:02"), "\(line)")
        }
    }

    @Test(arguments: [
        (["--all", "tickr"], "give it without DEVICE"),
        (["tickr", "tickr"], "'tickr' is given twice"),
        (["hci0/"], "DEVICE must not be empty"),
    ])
    func badCombinations(arguments: [String], message: String) async throws {
        let result = try await HRMProcess.run(["watch"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func strapRequests() {
        #expect(
            StrapRequest(parsing: "hci1/C0:FF:EE:00:00:01")
                == StrapRequest(wanted: "C0:FF:EE:00:00:01", adapter: "hci1"))
        #expect(
            StrapRequest(parsing: "00:AA:01:00:00:00/polar")
                == StrapRequest(wanted: "polar", adapter: "00:AA:01:00:00:00"))
        #expect(StrapRequest(parsing: "polar") == StrapRequest(wanted: "polar"))
        // Not an adapter before the slash: part of the name.
        #expect(StrapRequest(parsing: "AC/DC strap") == StrapRequest(wanted: "AC/DC strap"))
        #expect(StrapRequest(parsing: "hcix/a") == StrapRequest(wanted: "hcix/a"))
    }
}

/// The straps on one adapter take turns to connect. The tests order events (a turn taken, a
/// strap counted as waiting) and never sleep to let something happen.
@Suite struct ConnectGateTests {
    actor Log {
        var entries: [String] = []
        func add(_ entry: String) { entries.append(entry) }
    }

    /// A turn's body that holds the turn until the test opens it.
    final class Hold: Sendable {
        private let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        func wait() async { for await _ in stream { return } }
        func open() { continuation.yield() }
    }

    /// Until `condition` holds (BrokerSupport's deadline only proves "not hung").
    static func until(_ condition: () async -> Bool) async -> Bool {
        await eventually(condition)
    }

    /// A gate whose turn a first strap has taken ("1 in" logged) and holds until `hold.open()`;
    /// it logs "1 out" when it lets go.
    static func heldTurn() async -> (gate: ConnectGate, log: Log, hold: Hold, first: Task<Void, Never>) {
        let gate = ConnectGate()
        let log = Log()
        let hold = Hold()
        let first = Task {
            _ = await gate.withTurn { () async -> Void in
                await log.add("1 in")
                await hold.wait()
                await log.add("1 out")
            }
        }
        #expect(await until { await log.entries == ["1 in"] })
        return (gate, log, hold, first)
    }

    @Test func oneAtATimeInArrivalOrder() async throws {
        let (gate, log, hold, first) = await Self.heldTurn()
        let second = Task {
            _ = await gate.withTurn { () async -> Void in await log.add("2 in") }
        }
        #expect(await Self.until { gate.waiting == 1 })
        let third = Task {
            _ = await gate.withTurn { () async -> Void in await log.add("3 in") }
        }
        #expect(await Self.until { gate.waiting == 2 })
        #expect(await log.entries == ["1 in"], "nobody else runs while the turn is held")
        hold.open()
        _ = await (first.value, second.value, third.value)
        #expect(await log.entries == ["1 in", "1 out", "2 in", "3 in"])
        #expect(gate.waiting == 0)
    }

    /// A strap stopped while it waits gives up its place without running, and the turn passes on.
    @Test func cancelledWhileWaiting() async throws {
        let (gate, log, hold, first) = await Self.heldTurn()
        let waiting = Task { await gate.withTurn { () async -> Int in 1 } }
        #expect(await Self.until { gate.waiting == 1 })
        let after = Task {
            await gate.withTurn { () async -> Int in
                await log.add("after")
                return 2
            }
        }
        #expect(await Self.until { gate.waiting == 2 })
        waiting.cancel()
        #expect(await waiting.value == nil)
        #expect(gate.waiting == 1)
        hold.open()
        _ = await first.value
        #expect(await after.value == 2)
        #expect(await log.entries == ["1 in", "1 out", "after"])
    }
}

/// The live table: a row per strap, redrawn in place, never wider than the terminal.
@Suite struct LiveTableTests {
    static func measurement(_ device: String, bpm: UInt8) -> MonitorEvent {
        MonitorEvent.decoding([0x16, bpm, 0x00, 0x04], device: device)
    }

    @Test func aRowPerStrapRedrawnInPlace() {
        var table = LiveTableRenderer(colour: false, width: { 100 })
        _ = table.render(
            MonitorEvent(
                device: "C0:FF:EE:00:00:01",
                kind: .info(name: "Polar H10", location: nil, battery: 80, manufacturer: nil, model: nil)))
        _ = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 120))
        let second = table.render(Self.measurement("C0:FF:EE:00:00:02", bpm: 90)) ?? ""
        #expect(table.rows.map(\.device) == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
        #expect(second.contains("Polar H10") && second.contains("♥ 120") && second.contains("♥ 90"))
        // The first strap's row again: up one row, rewritten, down again; nothing else.
        let update = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 121)) ?? ""
        #expect(update.hasPrefix("\u{1B}[1A\r\u{1B}[2K"))
        #expect(update.hasSuffix("\u{1B}[1B"))
        #expect(update.contains("♥ 121") && !update.contains("♥ 90"))
        #expect(table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 121)) == nil, "nothing changed")
    }

    @Test func rowsNeverWiderThanTheTerminal() {
        let table = LiveTableRenderer(colour: false, width: { 40 })
        var row = LiveTableRenderer.Row(device: "C0:FF:EE:00:00:01")
        row.name = "A strap with a very long name indeed"
        row.bpm = 150
        row.battery = 50
        row.rr = [400, 401, 402]
        for width in [20, 40, 60, 200] {
            let text = table.line(of: row, width: width).text
            #expect(text.count <= width - 1, "\(text.count) for \(width)")
        }
        #expect(table.line(of: row, width: 200).text.contains("RR 400 401 402 ms"))
    }

    /// Lines scroll above the table, which is drawn again below them.
    @Test func linesScrollAboveTheTable() {
        var table = LiveTableRenderer(colour: false, width: { 100 })
        _ = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 120))
        _ = table.render(Self.measurement("C0:FF:EE:00:00:02", bpm: 90))
        let alert = HeartRateAlert(direction: .above, bpm: 121, bound: 120)
        let text = table.render(MonitorEvent(device: nil, kind: .alert(alert))) ?? ""
        #expect(text.hasPrefix("\u{07}\u{1B}[1A\r\u{1B}[J!! heart rate above"), "\(text.debugDescription)")
        #expect(text.contains("♥ 120") && text.contains("♥ 90"))
        #expect(table.finish() == "\n")
    }

    /// `-- scanning` is the region's line while no strap has a row, gone once one has (never a
    /// stale line above the table); a later scan for a missing strap does not print it again
    /// (#26 item 6).
    @Test func scanningIsShownOnlyUntilTheFirstRow() {
        var table = LiveTableRenderer(colour: false, width: { 100 })
        let scanning = MonitorEvent(device: nil, kind: .status(.scanning, detail: nil))
        #expect(table.render(scanning) == "\r\u{1B}[2K-- scanning")
        let first = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 120)) ?? ""
        // Back over the scanning line, which the row replaces.
        #expect(first.hasPrefix("\r\u{1B}[J\r\u{1B}[2K"), "\(first.debugDescription)")
        #expect(!first.contains("scanning") && first.contains("♥ 120"))
        #expect(table.render(scanning) == nil)
    }

    /// A strap that is not connected shows no zone beside its missing heart rate (#26 item 6).
    @Test func aReconnectingStrapShowsNoZone() {
        var table = LiveTableRenderer(colour: false, width: { 100 })
        let plain = Self.measurement("C0:FF:EE:00:00:01", bpm: 160)
        guard case .measurement(let m, _) = plain.kind else {
            Issue.record("not a measurement: \(plain.kind)")
            return
        }
        _ = table.render(plain.with(.measurement(m, zone: 4)))
        #expect(table.rows.first?.zone == 4)
        let text =
            table.render(
                MonitorEvent(device: "C0:FF:EE:00:00:01", kind: .status(.reconnecting, detail: nil))) ?? ""
        #expect(text.contains("♥ --") && text.contains("reconnecting"))
        #expect(!text.contains("zone"), "\(text)")
    }

    /// At the end the table stays where it is, every row stopped, with the final status under
    /// it: not printed a second time below `-- stopped` (#26 item 6).
    @Test func theTableEndsInPlace() {
        var table = LiveTableRenderer(colour: false, width: { 100 })
        _ = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 120))
        _ = table.render(Self.measurement("C0:FF:EE:00:00:02", bpm: 90))
        let text =
            table.render(MonitorEvent(device: nil, kind: .status(.stopped, detail: "20 measurements"))) ?? ""
        let stopped = text.range(of: "-- stopped: 20 measurements\n")
        #expect(stopped?.upperBound == text.endIndex, "nothing drawn after it: \(text.debugDescription)")
        #expect(text.components(separatedBy: "stopped").count - 1 == 3, "two rows and the status")
        #expect(table.finish() == nil)
        #expect(table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 121)) == nil)
    }
}

/// Several straps against hrm-sim's multi-strap scenarios: a strap that drops while the others
/// stream, an adapter with room for two links, an adapter that refuses concurrent connects.
@Suite struct WatchSeveralStrapsScenarioTests {
    /// The Wahoo drops for 1 s every 4 s; the Garmin and the Polar stream on: every notification
    /// hrm-sim sent them is printed once, and neither ever disconnects. hrm runs until the Wahoo
    /// has dropped twice and come back (events, not a duration a loaded machine may not fit in).
    @Test func oneDropsWhileTheOthersStream() async throws {
        let log = WatchBinaryTests.temporary("three-straps.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "three-straps", ["watch", "--json", "--all"], log: log, patience: .seconds(90)
        ) { stdout in
            let wahoo = WatchSeveralStrapsTests.events(stdout).filter {
                $0["device"] as? String == "C0:FF:EE:00:03:03"
            }
            return wahoo.filter { $0["state"] as? String == "reconnecting" }.count >= 2
                && WatchSeveralStrapsTests.measurements(stdout, of: "C0:FF:EE:00:03:03").count >= 4
                && ["C0:FF:EE:00:03:01", "C0:FF:EE:00:03:02"].allSatisfy {
                    WatchSeveralStrapsTests.measurements(stdout, of: $0).count >= 7
                }
        }
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchSeveralStrapsTests.events(result.stdout)
        let sent = try WatchScenarioTests.log(log).filter { $0["event"] as? String == "notify" }
        for (address, path) in [
            ("C0:FF:EE:00:03:01", "dev_C0_FF_EE_00_03_01"), ("C0:FF:EE:00:03:02", "dev_C0_FF_EE_00_03_02"),
        ] {
            let printed = WatchSeveralStrapsTests.measurements(result.stdout, of: address)
            let sentToIt = sent.filter { ($0["path"] as? String)?.contains(path) == true }
            #expect(printed.count >= 7, "\(address): \(printed.count)")
            // The last may have been on its way when the duration ended.
            #expect(
                sentToIt.count - printed.count <= 1,
                "\(address): \(sentToIt.count) sent, \(printed.count) printed")
            #expect(
                !events.contains {
                    $0["device"] as? String == address && $0["state"] as? String == "disconnected"
                })
        }
        let wahoo = events.filter { $0["device"] as? String == "C0:FF:EE:00:03:03" }
        #expect(wahoo.filter { $0["state"] as? String == "disconnected" }.count >= 2)
        #expect(wahoo.filter { $0["state"] as? String == "reconnecting" }.count >= 2)
        #expect(WatchSeveralStrapsTests.measurements(result.stdout, of: "C0:FF:EE:00:03:03").count >= 4)
    }

    /// Room for two links: two straps stream, the third is told why it waits and keeps trying,
    /// and its tries hold up neither of the two (every notification sent to them is printed).
    /// hrm runs until the third was refused twice.
    @Test func anAdapterWithRoomForTwo() async throws {
        let log = WatchBinaryTests.temporary("link-cap.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "link-cap", ["watch", "--json", "--all"], log: log, patience: .seconds(90)
        ) { stdout in
            WatchSeveralStrapsTests.events(stdout).filter {
                ($0["detail"] as? String)?.contains("may have no room") == true
            }.count >= 2
        }
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchSeveralStrapsTests.events(result.stdout)
        let streaming = Set(
            events.filter { $0["type"] as? String == "measurement" }.compactMap { $0["device"] as? String })
        #expect(streaming.count == 2, "\(streaming)")
        let waiting = try #require(
            ["C0:FF:EE:00:04:01", "C0:FF:EE:00:04:02", "C0:FF:EE:00:04:03"].first { !streaming.contains($0) })
        let refusals = events.filter {
            $0["device"] as? String == waiting && $0["state"] as? String == "disconnected"
        }
        #expect(refusals.count >= 2, "it keeps trying: \(refusals.count)")
        let detail = refusals.first?["detail"] as? String ?? ""
        #expect(detail.contains("le-connection-abort-by-local"), "\(detail)")
        #expect(detail.contains("holds 2 other straps' links and may have no room"), "\(detail)")
        let sent = try WatchScenarioTests.log(log).filter { $0["event"] as? String == "notify" }
        for device in streaming {
            let path = "dev_" + device.replacing(":", with: "_")
            let sentToIt = sent.filter { ($0["path"] as? String)?.contains(path) == true }.count
            let printed = WatchSeveralStrapsTests.measurements(result.stdout, of: device).count
            // The last may have been on its way when hrm was stopped.
            #expect(printed > 0 && sentToIt - printed <= 1, "\(device): \(sentToIt) sent, \(printed) printed")
        }
    }

    /// Two adapters with room for one link each: `ADAPTER/DEVICE` spreads two straps over them
    /// and both stream; a device seen by each adapter is a device of each.
    @Test func strapsSpreadOverTwoAdapters() async throws {
        let scenario = WatchBinaryTests.temporary("two-adapters.json")
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        try #"""
        {"adapters": [{"name": "hci0", "address": "00:AA:01:00:00:00", "maxConnections": 1},
                      {"name": "hci1", "address": "00:AA:01:00:00:01", "maxConnections": 1}],
         "devices": [
           {"address": "C0:FF:EE:00:06:01", "adapter": "hci0", "name": "Left", "uuids": ["180d"], "heartRate": {"bpm": 120, "seed": 1}},
           {"address": "C0:FF:EE:00:06:02", "adapter": "hci1", "name": "Right", "uuids": ["180d"], "heartRate": {"bpm": 80, "seed": 2}}]}
        """#.write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try await HRMProcess.runUnderSim(
            scenario, ["watch", "--json", "--count", "6", "hci0/left", "hci1/right"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(WatchSeveralStrapsTests.measurements(result.stdout, of: "C0:FF:EE:00:06:01").count >= 2)
        #expect(WatchSeveralStrapsTests.measurements(result.stdout, of: "C0:FF:EE:00:06:02").count >= 2)
    }

    /// An adapter that refuses a Connect while another is pending: hrm's connects take turns, so
    /// none is refused and all three stream.
    @Test func connectsTakeTurns() async throws {
        let log = WatchBinaryTests.temporary("busy-connects.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "busy-connects", ["watch", "--json", "--all", "--count", "9"], log: log)
        #expect(result.status == 0, "\(result.stderr)")
        let streaming = Set(
            WatchSeveralStrapsTests.events(result.stdout).filter { $0["type"] as? String == "measurement" }
                .compactMap { $0["device"] as? String })
        #expect(streaming.count == 3, "\(streaming)")
        #expect(!result.stdout.contains("In Progress"))
        let refused = try WatchScenarioTests.log(log).filter { $0["event"] as? String == "connect-refused" }
        #expect(refused.isEmpty, "\(refused)")
    }
}
