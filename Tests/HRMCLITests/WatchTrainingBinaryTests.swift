import Foundation
import Testing

/// `hrm watch` with HRV, zones and an alert against hrm-sim's `climb` strap (95 to 185 bpm over
/// 12 s, 4 notifications a second): every figure checked against what hrm printed before it,
/// with arithmetic of the test's own.
@Suite struct WatchTrainingBinaryTests {
    @Test func hrvZonesAndAnAlertThroughAClimb() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrm-alert-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let alertsFile = directory.appendingPathComponent("alerts").path
        let result = try await HRMProcess.runUnderSim(
            "climb",
            [
                "watch", "--json", "--count", "56", "--hrv-every", "2", "--hrv-window", "10", "--max-hr",
                "200",
                "--alert-above", "150", "--on-alert",
                #"printf '%s %s %s %s\n' "$HRM_ALERT" "$HRM_BPM" "$HRM_BOUND" "$HRM_DEVICE" >> "\#(alertsFile)""#,
                "Climb",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        let measurements = events.filter { $0["type"] as? String == "measurement" }
        try #require(measurements.count == 56)

        // Zones: 50/60/70/80/90 % of 200, on every measurement; the climb goes through 2 to 5.
        for m in measurements {
            let bpm = try #require(m["bpm"] as? Int)
            #expect(m["zone"] as? Int == [100, 120, 140, 160, 180].filter { bpm >= $0 }.count)
        }
        #expect(Set(measurements.compactMap { $0["zone"] as? Int }).isSuperset(of: [2, 3, 4, 5]))

        // HRV: each event right after a measurement with RR intervals, over the most recent beats
        // printed so far whose sum is at most 10 s, no artefact in this clean climb.
        var printed: [Double] = []
        var hrvEvents = 0
        for (index, event) in events.enumerated() {
            if event["type"] as? String == "measurement" { printed += event["rr_ms"] as? [Double] ?? [] }
            guard event["type"] as? String == "hrv" else { continue }
            hrvEvents += 1
            let before = events[index - 1]
            #expect(before["type"] as? String == "measurement")
            #expect((before["rr_ms"] as? [Double])?.isEmpty == false)
            let expected = Self.timeDomain(Self.window(printed, seconds: 10))
            #expect(event["beats"] as? Int == expected.beats)
            #expect(event["artefacts"] as? Int == 0)
            for (key, value) in [
                ("mean_nn_ms", expected.mean), ("sdnn_ms", expected.sdnn), ("rmssd_ms", expected.rmssd),
                ("pnn50", expected.pnn50), ("mean_hr", 60_000 / expected.mean),
                ("window_s", expected.sum / 1000),
            ] {
                let shown = try #require(event[key] as? Double, "\(key) in \(event)")
                #expect(abs(shown - value) <= 0.0051, "\(key): \(shown) against \(value)")
            }
        }
        #expect(hrvEvents >= 5)

        // One alert, right after the measurement that set it off (and its hrv event, if one came):
        // the first measurement at least 3 s into a run of heart rates above 150.
        let alerts = events.enumerated().filter { $0.element["type"] as? String == "alert" }
        try #require(alerts.count == 1)
        let (alertIndex, alert) = (alerts[0].offset, alerts[0].element)
        let before = events[..<alertIndex].reversed().prefix { $0["type"] as? String != "measurement" }
        #expect(before.allSatisfy { $0["type"] as? String == "hrv" })
        let trigger = try #require(events[..<alertIndex].last { $0["type"] as? String == "measurement" })
        #expect(alert["alert"] as? String == "above")
        #expect(alert["bound"] as? Int == 150)
        #expect(alert["bpm"] as? Int == trigger["bpm"] as? Int)
        let run = measurements.prefix { ($0["time"] as? String) != (trigger["time"] as? String) }
            .reversed().prefix { ($0["bpm"] as? Int ?? 0) > 150 }
        let start = try #require(run.last?["time"] as? String)
        let held = try Self.seconds(#require(trigger["time"] as? String)) - Self.seconds(start)
        #expect(held >= 3)
        if let previous = run.first?["time"] as? String {
            #expect(try Self.seconds(previous) - Self.seconds(start) < 3)
        }

        // --on-alert ran once, with the alert in its environment.
        let ran = try String(contentsOfFile: alertsFile, encoding: .utf8)
        let bpm = alert["bpm"] as? Int ?? -1
        #expect(ran == "above \(bpm) 150 D2:4B:7E:10:20:40\n")

        // The summary, just before `stopped`: what the measurements say.
        let summary = try #require(events.dropLast().last)
        #expect(summary["type"] as? String == "summary")
        let rates = measurements.compactMap { $0["bpm"] as? Int }
        #expect(summary["measurements"] as? Int == 56)
        #expect(summary["min_bpm"] as? Int == rates.min())
        #expect(summary["max_bpm"] as? Int == rates.max())
        let average = Double(rates.reduce(0, +)) / Double(rates.count)
        #expect(abs((summary["avg_bpm"] as? Double ?? 0) - average) <= 0.0051)
        let zoneSeconds = try #require(summary["zone_s"] as? [Double])
        #expect(zoneSeconds.count == 6)
        // 56 measurements 0.25 s apart: 13.75 s between the first and the last, give or take.
        #expect(abs(zoneSeconds.reduce(0, +) - 13.75) < 1)
        #expect(summary["beats"] as? Int == printed.count)
        #expect(summary["artefacts"] as? Int == 0)
        #expect(events.last?["state"] as? String == "stopped")
    }

    /// The longest run of the most recent intervals whose sum is at most `seconds`.
    static func window(_ intervals: [Double], seconds: Double) -> [Double] {
        var sum = 0.0
        var kept: [Double] = []
        for interval in intervals.reversed() {
            guard sum + interval <= seconds * 1000 else { break }
            sum += interval
            kept.insert(interval, at: 0)
        }
        return kept
    }

    static func timeDomain(_ nn: [Double]) -> (
        beats: Int, sum: Double, mean: Double, sdnn: Double, rmssd: Double, pnn50: Double
    ) {
        let sum = nn.reduce(0, +)
        let mean = sum / Double(nn.count)
        let variance = nn.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(nn.count - 1)
        let differences = zip(nn.dropFirst(), nn).map { $0 - $1 }
        let rmssd = (differences.map { $0 * $0 }.reduce(0, +) / Double(differences.count)).squareRoot()
        let pnn50 = 100 * Double(differences.filter { abs($0) > 50 }.count) / Double(differences.count)
        return (nn.count, sum, mean, variance.squareRoot(), rmssd, pnn50)
    }

    /// Seconds of the day of `2026-11-23T14:49:36.460Z`.
    static func seconds(_ time: String) throws -> Double {
        let clock = try #require(time.split(separator: "T").last?.dropLast())
        let parts = clock.split(separator: ":").compactMap { Double($0) }
        try #require(parts.count == 3)
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }
}

extension WatchTrainingBinaryTests {
    /// A failing --on-alert command is reported (stderr, and an error event in JSON) and watching goes on.
    @Test func aFailingAlertCommandIsReportedAndWatchingGoesOn() async throws {
        let result = try await HRMProcess.runUnderSim(
            "basic",
            ["watch", "--json", "--count", "6", "--alert-above", "30", "--on-alert", "exit 3", "Polar"])
        #expect(result.status == 0)
        let events = WatchBinaryTests.lines(result.stdout)
        #expect(events.filter { $0["type"] as? String == "measurement" }.count == 6)
        #expect(events.filter { $0["type"] as? String == "alert" }.count == 1)
        let failure = events.first { $0["code"] as? String == "alert_command_failed" }
        #expect((failure?["message"] as? String)?.contains("exited with status 3") == true)
        #expect(result.stderr.contains("--on-alert command exited with status 3"))
    }
}
