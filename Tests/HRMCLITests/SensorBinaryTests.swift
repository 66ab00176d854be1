import Foundation
import Testing

/// `--ecg`, `--acc`, `hrm pair` and `hrm unpair` (#24) as a user runs them, against hrm-sim's Polar
/// H10: pairing on demand through hrm's own agent, the PMD streams beside heart rate, R peaks that
/// are the strap's own beats, what a refused pairing and a strap without PMD do, and streams
/// started again after a drop. Runs end when hrm has printed what the test waits for (SIGTERM
/// then); the patience only proves "not hung".
@Suite struct SensorBinaryTests {
    static let h10 = "A0:9E:1A:1A:2B:3C"

    static func events(_ text: String, _ type: String) -> [[String: Any]] {
        WatchBinaryTests.lines(text).filter { $0["type"] as? String == type }
    }

    static func simEvents(_ log: String) throws -> [[String: Any]] {
        WatchBinaryTests.lines(try String(contentsOfFile: log, encoding: .utf8))
    }

    static func names(_ log: String) throws -> [String] {
        try simEvents(log).compactMap { entry in
            entry["event"] as? String == "call" ? entry["member"] as? String : entry["event"] as? String
        }
    }

    static func count(_ text: String, _ type: String) -> Int {
        text.components(separatedBy: "\"type\":\"\(type)\"").count - 1
    }

    /// An unpaired H10: hrm pairs it through an agent of its own, starts both streams, and the R
    /// peaks it finds in the ECG are the beats the strap reports on 0x2A37. Stopping stops the
    /// streams on the strap, and the recording keeps the frames raw.
    @Test func ecgAndAccelerationFromAnUnpairedH10() async throws {
        let log = WatchBinaryTests.temporary("h10.jsonl")
        let recording = WatchBinaryTests.temporary("h10-recording.jsonl")
        defer {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: recording)
        }
        let result = try await HRMProcess.runUnderSim(
            "polar-h10",
            [
                "watch", "--json", "--no-config", "--ecg", "--acc", "--acc-rate", "50", "--acc-range", "4",
                "--record", recording, Self.h10,
            ], log: log, patience: .seconds(120)
        ) { stdout in
            Self.count(stdout, "ecg_beat") >= 8 && Self.count(stdout, "acc") >= 3
                && Self.count(stdout, "measurement") >= 12
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.events(result.stdout, "error").isEmpty, "\(result.stdout)")
        // Paired on demand: hrm's agent registered for the call, Pair, the agent given back as soon
        // as Pair answered, Trusted; then the streams.
        let names = try Self.names(log)
        let order = names.filter {
            ["agent-registered", "Pair", "paired", "trusted", "agent-unregistered", "pmd-start"].contains($0)
        }
        #expect(
            Array(order.prefix(7))
                == [
                    "agent-registered", "Pair", "paired", "agent-unregistered", "trusted", "pmd-start",
                    "pmd-start",
                ],
            "\(order)")
        #expect(!names.contains("RequestDefaultAgent"), "hrm never asks to be the default agent")
        let registered = try Self.simEvents(log).first { $0["event"] as? String == "agent-registered" }
        #expect(registered?["capability"] as? String == "NoInputNoOutput")
        // The streams as asked, and stopped on the strap at the end.
        let starts = try Self.simEvents(log).filter { $0["event"] as? String == "pmd-start" }
        #expect(Set(starts.compactMap { $0["type"] as? String }) == ["ecg", "acc"])
        #expect(starts.first { $0["type"] as? String == "acc" }?["rate"] as? Int == 50)
        let stops = try Self.simEvents(log).filter { $0["event"] as? String == "pmd-stop" }
        #expect(
            Set(stops.filter { $0["reason"] as? String == "command" }.compactMap { $0["type"] as? String })
                == ["ecg", "acc"], "\(stops)")
        // The frames by AcquireNotify (a socket of hrm's own), not a D-Bus signal each.
        let routes = try Self.simEvents(log).filter { $0["event"] as? String == "pmd-frame" }.compactMap {
            $0["via"] as? [String]
        }
        #expect(routes.contains(["fd"]), "\(routes)")
        #expect(!routes.contains { $0.contains("signal") }, "\(routes)")
        // ECG frames of 73 samples at 130 Hz, their times 73 samples apart on the strap's clock.
        let ecg = Self.events(result.stdout, "ecg")
        #expect(ecg.allSatisfy { ($0["uv"] as? [Int])?.count == 73 && $0["rate_hz"] as? Int == 130 })
        let times = ecg.compactMap { ($0["sensor_ns"] as? NSNumber)?.int64Value }
        for (a, b) in zip(times, times.dropFirst()) {
            #expect(abs(Double(b - a) - 73e9 / 130) < 1e6, "\(a) → \(b)")
        }
        let acc = Self.events(result.stdout, "acc")
        #expect(acc.allSatisfy { $0["rate_hz"] as? Int == 50 && $0["range_g"] as? Int == 4 })
        #expect(acc.allSatisfy { (($0["mg"] as? [[Int]]) ?? []).allSatisfy { $0.count == 3 } })
        #expect(acc.contains { !(($0["mg"] as? [[Int]]) ?? []).isEmpty })
        // The ECG's RR intervals are the strap's, to a sample (7.7 ms) and the strap's 1/1024 s.
        let strap = Self.events(result.stdout, "measurement").flatMap { ($0["rr_ms"] as? [Double]) ?? [] }
        let beats = Self.events(result.stdout, "ecg_beat")
        #expect(beats.first?["rr_ms"] is NSNull)
        let fromECG = beats.compactMap { $0["rr_ms"] as? Double }
        #expect(fromECG.count >= 7)
        // The first five: on a loaded machine the strap's notifications may lag the ECG's frames
        // by a few beats (hrm-sim sends each beat's RR once its time has passed).
        let first = fromECG.prefix(5)
        let aligned = strap.indices.contains { start in
            start + first.count <= strap.count && zip(first, strap[start...]).allSatisfy { abs($0 - $1) <= 9 }
        }
        #expect(aligned, "ECG \(fromECG) strap \(strap)")
        // The recording: the frames as the strap sent them, with their settings, and the beats.
        let recorded = WatchBinaryTests.lines(try String(contentsOfFile: recording, encoding: .utf8))
        let frames = recorded.filter { $0["type"] as? String == "pmd" }
        #expect(
            frames.contains {
                $0["measurement"] as? String == "ecg" && ($0["hex"] as? String)?.hasPrefix("00") == true
            })
        #expect(
            frames.contains {
                $0["measurement"] as? String == "acc" && $0["rate_hz"] as? Int == 50
                    && $0["range_g"] as? Int == 4
                    && ($0["hex"] as? String)?.hasPrefix("02") == true
            })
        #expect(!recorded.contains { $0["type"] as? String == "ecg" || $0["type"] as? String == "acc" })
        #expect(recorded.filter { $0["type"] as? String == "ecg_beat" }.count == beats.count)
    }

    /// A strap that refuses pairing: `pairing_failed`, said once, and heart rate goes on.
    @Test func aRefusedPairingLeavesHeartRateGoingOn() async throws {
        let log = WatchBinaryTests.temporary("h10-refuses.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "polar-h10-refuses-pairing", ["watch", "--json", "--no-config", "--ecg", Self.h10], log: log,
            patience: .seconds(90)
        ) { stdout in
            guard let failed = stdout.range(of: "\"code\":\"pairing_failed\"") else { return false }
            return Self.count(String(stdout[failed.upperBound...]), "measurement") >= 3
        }
        #expect(result.status == 0, "\(result.stderr)")
        let errors = Self.events(result.stdout, "error")
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?["code"] as? String == "pairing_failed")
        #expect((errors.first?["message"] as? String)?.contains("hrm pair") == true)
        #expect(result.stderr.contains("pairing was refused"), "\(result.stderr)")
        #expect(Self.count(result.stdout, "ecg") == 0)
        // The agent was given back, and no command was written to a strap that is not paired.
        let names = try Self.names(log)
        #expect(names.contains("agent-unregistered"))
        #expect(!names.contains("pmd-unanswered"), "\(names)")
    }

    /// A strap without Polar's PMD service: said once, and heart rate goes on.
    @Test func aStrapWithoutPMDSaysSoOnce() async throws {
        let result = try await HRMProcess.runUnderSim(
            "basic", ["watch", "--json", "--no-config", "--ecg", "--acc", "D2:4B:7E:10:20:30"],
            patience: .seconds(60)
        ) { stdout in
            guard let said = stdout.range(of: "\"code\":\"pmd_unavailable\"") else { return false }
            return Self.count(String(stdout[said.upperBound...]), "measurement") >= 2
        }
        #expect(result.status == 0, "\(result.stderr)")
        let errors = Self.events(result.stdout, "error")
        #expect(errors.map { $0["code"] as? String } == ["pmd_unavailable"], "\(errors)")
        #expect(result.stderr.contains("no PMD service"))
    }

    /// A paired H10 whose link drops: the streams start again after the reconnect, and the first
    /// R peak after it has no RR interval (none spans the gap).
    @Test func streamsStartAgainAfterADrop() async throws {
        let log = WatchBinaryTests.temporary("h10-drop.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await HRMProcess.runUnderSim(
            "polar-h10-paired", ["watch", "--json", "--no-config", "--ecg", Self.h10], log: log,
            patience: .seconds(150)
        ) { stdout in
            let parts = stdout.components(separatedBy: "\"state\":\"connected\"")
            return parts.count >= 3 && Self.count(parts[2], "ecg_beat") >= 2
        }
        #expect(result.status == 0, "\(result.stderr)")
        let names = try Self.names(log)
        // Paired already: no pairing, and the ECG started on each connection.
        #expect(!names.contains("Pair"))
        let starts = try Self.simEvents(log).filter { $0["event"] as? String == "pmd-start" }
        #expect(starts.count == 2, "\(starts)")
        let afterReconnect = result.stdout.components(separatedBy: "\"state\":\"connected\"")[2]
        let beats = Self.events(afterReconnect, "ecg_beat")
        #expect(beats.first?["rr_ms"] is NSNull, "\(beats)")
        #expect(beats.dropFirst().allSatisfy { $0["rr_ms"] is Double })
    }

    /// `hrm pair` and `hrm unpair` as commands.
    @Test func pairAndUnpair() async throws {
        let log = WatchBinaryTests.temporary("pair.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let paired = try await HRMProcess.runUnderSim(
            "polar-h10", ["pair", "--no-config", "Polar H10"], log: log, patience: .seconds(60))
        #expect(paired.status == 0, "\(paired.stderr)")
        #expect(paired.stdoutLines == ["paired with Polar H10 1A1A2B3C (\(Self.h10)), and trusted it"])
        let names = try Self.names(log)
        #expect(names.contains("paired") && names.contains("trusted") && names.contains("agent-unregistered"))
        // The link made for pairing is closed again.
        #expect(names.last { $0 == "Disconnect" || $0 == "Connect" } == "Disconnect", "\(names)")

        let again = try await HRMProcess.runUnderSim(
            "polar-h10-paired", ["pair", "--no-config", Self.h10], patience: .seconds(60))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdoutLines == ["Polar H10 1A1A2B3C (\(Self.h10)) was paired already"])

        let refused = try await HRMProcess.runUnderSim(
            "polar-h10-refuses-pairing", ["pair", "--no-config", Self.h10], patience: .seconds(60))
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("hrm pair: pairing was refused"), "\(refused.stderr)")

        let unpairLog = WatchBinaryTests.temporary("unpair.jsonl")
        defer { try? FileManager.default.removeItem(atPath: unpairLog) }
        let unpaired = try await HRMProcess.runUnderSim(
            "polar-h10-paired", ["unpair", "--no-config", "Polar H10"], log: unpairLog, patience: .seconds(60)
        )
        #expect(unpaired.status == 0, "\(unpaired.stderr)")
        #expect(
            unpaired.stdoutLines.first?.hasPrefix("unpaired Polar H10 1A1A2B3C") == true, "\(unpaired.stdout)"
        )
        #expect(try Self.names(unpairLog).contains("unpaired"))

        let unknown = try await HRMProcess.runUnderSim(
            "basic", ["unpair", "--no-config", "00:11:22:33:44:55"], patience: .seconds(60))
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("bluetoothd knows no device"), "\(unknown.stderr)")
    }
}
