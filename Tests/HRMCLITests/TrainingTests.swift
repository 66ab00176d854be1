import HRV
import HeartRate
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// Zones, alerts and the session summary, as values and as pipeline processors.
@Suite struct TrainingTests {
    @Test func zonesFromMaximumAreFiftyToNinetyPercent() {
        #expect(HeartRateZones(maximum: 200).lowerBounds == [100, 120, 140, 160, 180])
        // 190 x 0.5 = 95, x 0.6 = 114, x 0.7 = 133, x 0.8 = 152, x 0.9 = 171.
        #expect(HeartRateZones(maximum: 190).lowerBounds == [95, 114, 133, 152, 171])
    }

    @Test func karvonenZonesAreOfTheReserve() {
        // Reserve 190 - 50 = 140: 50 + 70 = 120, 50 + 84 = 134, 50 + 98 = 148, 50 + 112 = 162, 50 + 126 = 176.
        #expect(HeartRateZones(maximum: 190, rest: 50).lowerBounds == [120, 134, 148, 162, 176])
    }

    @Test func zoneOfAHeartRate() {
        let zones = HeartRateZones(lowerBounds: [100, 120, 140, 160, 180])
        #expect(zones.zone(for: 0) == 0)
        #expect(zones.zone(for: 99) == 0)
        #expect(zones.zone(for: 100) == 1)
        #expect(zones.zone(for: 119) == 1)
        #expect(zones.zone(for: 120) == 2)
        #expect(zones.zone(for: 179) == 4)
        #expect(zones.zone(for: 180) == 5)
        #expect(zones.zone(for: 250) == 5)
    }

    @Test func alertGoesOffAfterThreeSecondsPastTheBound() {
        var trigger = AlertTrigger(.above, bound: 150)
        #expect(trigger.observe(bpm: 150, at: 0) == nil)  // at the bound is not above it
        #expect(trigger.observe(bpm: 151, at: 1000) == nil)
        #expect(trigger.observe(bpm: 155, at: 3999) == nil)
        #expect(
            trigger.observe(bpm: 156, at: 4000) == HeartRateAlert(direction: .above, bpm: 156, bound: 150))
        // Once: staying above, or dipping back by less than 3 bpm, does not set it off again.
        #expect(trigger.observe(bpm: 160, at: 9000) == nil)
        #expect(trigger.observe(bpm: 148, at: 10000) == nil)
        #expect(trigger.observe(bpm: 152, at: 11000) == nil)
        #expect(trigger.observe(bpm: 152, at: 15000) == nil)
        // Back by 3 bpm re-arms it; then 3 s above again.
        #expect(trigger.observe(bpm: 147, at: 16000) == nil)
        #expect(trigger.observe(bpm: 151, at: 17000) == nil)
        #expect(
            trigger.observe(bpm: 151, at: 20000) == HeartRateAlert(direction: .above, bpm: 151, bound: 150))
    }

    @Test func alertNeedsThreeSecondsWithoutABreak() {
        var trigger = AlertTrigger(.below, bound: 60)
        #expect(trigger.observe(bpm: 55, at: 0) == nil)
        #expect(trigger.observe(bpm: 61, at: 2000) == nil)  // back above: the 3 s start again
        #expect(trigger.observe(bpm: 55, at: 2500) == nil)
        #expect(trigger.observe(bpm: 55, at: 5000) == nil)
        trigger.interrupt()  // a drop
        #expect(trigger.observe(bpm: 55, at: 6000) == nil)
        #expect(trigger.observe(bpm: 54, at: 9000) == HeartRateAlert(direction: .below, bpm: 54, bound: 60))
    }

    @Test func alertWatcherSendsTheAlertRightAfterItsMeasurement() throws {
        let sink = CollectingSink()
        let pipeline = EventPipeline(processors: [AlertWatcher(above: 150, below: nil)], sinks: [sink])
        for (second, bpm) in [(0, 151), (1, 152), (2, 0), (3, 153), (4, 154), (5, 155), (6, 156)] {
            pipeline.send(measurement(bpm: bpm, atSecond: second))
        }
        let kinds = sink.received.map { MonitorEventJSON.typeName($0.kind) }
        // The 0 bpm frame (no contact) breaks the 3 s: 153 at 3 s starts them again, 156 at 6 s ends them.
        #expect(kinds == Array(repeating: "measurement", count: 7) + ["alert"])
        let alert = try #require(sink.received.last)
        guard case .alert(let value) = alert.kind else { return #expect(Bool(false)) }
        #expect(value == HeartRateAlert(direction: .above, bpm: 156, bound: 150))
        #expect(alert.device == "AA:BB:CC:DD:EE:FF")
    }

    @Test func zoneTaggerAndSummaryAddUpTheSession() throws {
        let sink = CollectingSink()
        let zones = HeartRateZones(lowerBounds: [100, 120, 140])
        let pipeline = EventPipeline(
            processors: [ZoneTagger(zones: zones), SessionSummary(zones: zones, hrv: nil)], sinks: [sink])
        pipeline.send(status(.connected, atSecond: 0))
        // 10 s in zone 1, 5 s in zone 2, then a drop, and 2 s in zone 3 after reconnecting.
        pipeline.send(measurement(bpm: 110, atSecond: 0))
        pipeline.send(measurement(bpm: 110, atSecond: 5))
        pipeline.send(measurement(bpm: 125, atSecond: 10))
        pipeline.send(measurement(bpm: 145, atSecond: 15))
        pipeline.send(status(.disconnected, atSecond: 16))
        pipeline.send(status(.connected, atSecond: 30))
        pipeline.send(measurement(bpm: 150, atSecond: 31))
        pipeline.send(measurement(bpm: 0, atSecond: 33))
        pipeline.send(MonitorEvent(time: time(40), device: nil, kind: .status(.stopped, detail: nil)))

        let zonesSeen = sink.received.compactMap { event -> Int? in
            if case .measurement(_, let zone) = event.kind { zone } else { nil }
        }
        #expect(zonesSeen == [1, 1, 2, 3, 3, 0])
        let kinds = sink.received.suffix(2).map { MonitorEventJSON.typeName($0.kind) }
        #expect(kinds == ["summary", "status"])
        guard case .summary(let report) = try #require(sink.received.dropLast().last).kind else {
            return #expect(Bool(false))
        }
        // Connected 0-16 s and 30-40 s; the 0 bpm frame counts as a measurement, not as a heart rate.
        #expect(report.connectedSeconds == 26)
        #expect(report.measurements == 6)
        #expect(report.minimumBPM == 110)
        #expect(report.maximumBPM == 150)
        #expect(report.averageBPM == Double(110 + 110 + 125 + 145 + 150) / 5)
        // 15 -> 16 s is not counted (the drop ends it at the next measurement's absence), 31 -> 33 s is zone 3.
        #expect(report.zoneSeconds == [0, 10, 5, 2])
        #expect(report.hrv == nil)
    }

    @Test func hrvEventsFollowTheirMeasurementAndSurviveAReconnect() throws {
        let sink = CollectingSink()
        let tracker = HRVTracker(settings: .init(every: 2, window: 60, correcting: false))
        let pipeline = EventPipeline(
            processors: [tracker, SessionSummary(zones: nil, hrv: tracker)], sinks: [sink])
        // One beat of 1000 ms a second, then 800 ms after a drop.
        for second in 0..<4 { pipeline.send(measurement(bpm: 60, rr: [1024], atSecond: second)) }
        pipeline.send(status(.disconnected, atSecond: 4))
        for second in 5..<8 { pipeline.send(measurement(bpm: 75, rr: [819], atSecond: second)) }

        let events = sink.received
        let kinds = events.map { MonitorEventJSON.typeName($0.kind) }
        // hrv at 2 s (after the third measurement), at 5 s and at 7 s.
        #expect(
            kinds == [
                "measurement", "measurement", "measurement", "hrv", "measurement", "status", "measurement",
                "hrv",
                "measurement", "measurement", "hrv",
            ])
        guard case .hrv(let last, _) = try #require(events.last).kind else { return #expect(Bool(false)) }
        // The window kept the beats from before the drop: 4 of 1000 ms and 3 of 819/1.024 ms.
        #expect(last.beats == 7)
        // Only differences within a run count: all 0, so the 1000 -> 799.8 ms step across the drop is not one.
        #expect(last.rmssd == 0)
        // The summary's HRV covers the session.
        pipeline.send(MonitorEvent(time: time(9), device: nil, kind: .status(.stopped, detail: nil)))
        guard case .summary(let report) = try #require(sink.received.dropLast().last).kind else {
            return #expect(Bool(false))
        }
        #expect(report.hrv?.beats == 7)
        #expect(report.hrv?.rmssd == 0)
    }

    /// `--rr-source ecg`: HRV from the R peaks found in the ECG; the strap's own RR are not used,
    /// and a first peak (no RR) ends a run as a drop does.
    @Test func hrvFromTheECGsBeatsWhenAskedFor() throws {
        let sink = CollectingSink()
        let tracker = HRVTracker(settings: .init(every: 2, window: 60, correcting: false, source: .ecg))
        let pipeline = EventPipeline(processors: [tracker], sinks: [sink])
        func beat(_ rr: Double?, atSecond second: Int) -> MonitorEvent {
            MonitorEvent(
                time: time(second), device: nil,
                kind: .ecgBeat(ECGBeat(sensorNanoseconds: UInt64(second) * 1_000_000_000, rrMilliseconds: rr))
            )
        }
        // The strap says 1000 ms each time; the ECG says 800, 820, 800, then a restart, then 900,
        // 940, 920. Reports every 2 s: at 3 s and at 5 s and 7 s.
        pipeline.send(beat(nil, atSecond: 0))
        for (second, rr) in [(1, 800.0), (2, 820), (3, 800)] {
            pipeline.send(measurement(bpm: 60, rr: [1024], atSecond: second))
            pipeline.send(beat(rr, atSecond: second))
        }
        pipeline.send(beat(nil, atSecond: 4))
        for (second, rr) in [(5, 900.0), (6, 940), (7, 920)] { pipeline.send(beat(rr, atSecond: second)) }
        let reports = sink.received.compactMap { if case .hrv(let m, _) = $0.kind { m } else { nil } }
        #expect(reports.count == 3)
        let last = try #require(reports.last)
        #expect(last.beats == 6)
        // Successive differences within runs: 20, 20, 40 and 20 ms (not 800 -> 900 across the
        // restart).
        let squares: Double = 20 * 20 + 20 * 20 + 40 * 40 + 20 * 20
        let expected = (squares / 4).squareRoot()
        let mean: Double = (800 + 820 + 800 + 900 + 940 + 920) / 6
        #expect(abs((last.rmssd ?? 0) - expected) < 1e-9)
        #expect(abs((last.meanNN ?? 0) - mean) < 1e-9)
    }

    @Test func hrvEveryZeroSendsNoHRVEvents() {
        let sink = CollectingSink()
        let pipeline = EventPipeline(
            processors: [HRVTracker(settings: .init(every: nil, window: 60, correcting: true))], sinks: [sink]
        )
        for second in 0..<20 { pipeline.send(measurement(bpm: 60, rr: [1024], atSecond: second)) }
        #expect(sink.received.count == 20)
    }

    @Test func summaryText() {
        var report = SessionReport()
        report.connectedSeconds = 724
        report.minimumBPM = 62
        report.averageBPM = 71.4
        report.maximumBPM = 84
        report.zoneSeconds = [0, 60, 664]
        report.hrv = HRVMetrics(beats: 850, artefacts: 2, rmssd: 45.24, alpha1: 0.853)
        #expect(
            report.text
                == "connected 12:04, 62/71/84 bpm min/avg/max, time in zones: Z1 1:00, Z2 11:04, RMSSD 45.2 ms, alpha1 0.85, 2 artefacts corrected"
        )
        #expect(SessionReport.clock(3723) == "1:02:03")
    }

    private func time(_ second: Int) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: 1_790_000_000_000 + Int64(second) * 1000)
    }

    private func measurement(bpm: Int, rr: [UInt16] = [], atSecond second: Int) -> MonitorEvent {
        let contact: HeartRateMeasurement.SensorContact = bpm == 0 ? .notDetected : .detected
        // Within UINT8 and at most 9 RR intervals: cannot fail.
        guard
            let m = try? HeartRateMeasurement(
                heartRate: UInt16(bpm), format: .uint8, sensorContact: contact, energyExpended: nil,
                rrIntervals: RRIntervals(ticks: rr))
        else { preconditionFailure("a valid measurement") }
        return MonitorEvent(time: time(second), device: "AA:BB:CC:DD:EE:FF", kind: .measurement(m))
    }

    private func status(_ state: MonitorEvent.State, atSecond second: Int) -> MonitorEvent {
        MonitorEvent(time: time(second), device: "AA:BB:CC:DD:EE:FF", kind: .status(state, detail: nil))
    }
}
