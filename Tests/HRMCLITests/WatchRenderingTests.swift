import HRV
import HeartRate
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

@Suite struct WatchRenderingTests {
    let address = "D2:4B:7E:10:20:30"

    func measurement(_ bytes: [UInt8], at ms: Int64) throws -> MonitorEvent {
        MonitorEvent(
            time: Timestamp(millisecondsSinceEpoch: ms), device: address,
            kind: .measurement(try HeartRateMeasurement(decoding: bytes)))
    }

    /// The header comes with the first row, not before it: a run that fails first prints none.
    @Test func csvHasAHeaderAndMeasurementsOnly() throws {
        var renderer = CSVRenderer()
        #expect(renderer.header == nil)
        #expect(renderer.render(MonitorEvent(device: address, kind: .battery(percent: 5))) == nil)
        #expect(
            renderer.render(try measurement([0x16, 0x48, 0x4D, 0x03], at: 0))?.hasPrefix(
                "time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format,zone\n1970-01-01T00:00:00.000Z,D2:4B")
                == true)
        #expect(
            renderer.render(try measurement([0x16, 0x48, 0x4D, 0x03], at: 1000))?.hasPrefix(
                "1970-01-01T00:00:01.000Z,D2:4B") == true)
    }

    @Test func textLines() throws {
        var renderer = TextLinesRenderer()
        let event = try measurement([0x16, 0x48, 0x4D, 0x03], at: 0)
        let line = renderer.render(event) ?? ""
        // Whole milliseconds, as on the live line: one precision for people (#26 item 11).
        #expect(line.hasSuffix("  72 bpm  contact detected  RR 825 ms\n"))
        let info = MonitorEvent(
            device: address,
            kind: .info(name: "Polar H10", location: .chest, battery: 87, manufacturer: "Polar", model: "H10")
        )
        #expect(
            renderer.render(info)?.hasSuffix(
                "Polar H10 (D2:4B:7E:10:20:30): worn on the chest, battery 87 %, Polar H10\n") == true)
        #expect(
            renderer.render(
                MonitorEvent(device: nil, kind: .error(code: .invalidHex, message: "y", hex: nil))) == nil
        )
    }

    @Test func liveLineIsRedrawnInPlace() throws {
        var renderer = LiveRenderer(colour: false)
        let event = try measurement([0x16, 0x48, 0x4D, 0x03], at: 0)
        let first = renderer.render(event) ?? ""
        #expect(first.hasPrefix("\r\u{1B}[2K♥ 72 bpm  contact ✓  RR 825 ms"))
        #expect(!first.contains("\n"), "the live line stays on one line")
        let status =
            renderer.render(MonitorEvent(device: nil, kind: .status(.reconnecting, detail: "in 0.5 s"))) ?? ""
        #expect(status.hasPrefix("\r\u{1B}[2K-- reconnecting: in 0.5 s\n"))
        #expect(renderer.finish() == nil, "no live line after a drop")
        _ = renderer.render(try measurement([0x06, 0x50], at: 1000))
        #expect(renderer.finish() == "\n")
    }

    /// A frame without RR intervals (or a 99 after a 100) leaves the fields after it where they
    /// were: fixed columns, a blank where a field has no value now (#26 item 5).
    @Test func liveLineFieldsKeepTheirColumns() throws {
        var renderer = LiveRenderer(colour: false, width: { 200 })
        _ = renderer.render(MonitorEvent(device: address, kind: .battery(percent: 80)))
        func column(of field: String, in line: String?) -> Int? {
            guard let line, let range = line.range(of: field) else { return nil }
            return line.distance(from: line.startIndex, to: range.lowerBound)
        }
        // 100 bpm with two RR intervals, then 99 bpm without any.
        let withRR = renderer.render(try measurement([0x16, 100, 0x4D, 0x03, 0x00, 0x03], at: 0))
        let without = renderer.render(try measurement([0x06, 99], at: 1000))
        let first = try #require(column(of: "battery 80 %", in: withRR), "\(withRR ?? "")")
        #expect(column(of: "battery 80 %", in: without) == first, "\((without ?? "").debugDescription)")
        #expect(column(of: "contact ✓", in: withRR) == column(of: "contact ✓", in: without))
        #expect(without?.contains("RR") == false)
        // A wider RR field widens its column once, and it stays that wide.
        let wider = renderer.render(
            try measurement([0x16, 100, 0x4D, 0x03, 0x00, 0x03, 0x00, 0x03], at: 2000))
        let widened = try #require(column(of: "battery 80 %", in: wider))
        #expect(widened > first)
        #expect(
            column(of: "battery 80 %", in: renderer.render(try measurement([0x06, 99], at: 3000))) == widened)
    }

    /// With several straps the line starts with the strap's address: the info and the summary
    /// do not say it again (#26 item 11).
    @Test func severalStrapLinesNameTheStrapOnce() {
        var renderer = TextLinesRenderer(namesDevice: true, width: { nil })
        let info = MonitorEvent(
            time: Timestamp(millisecondsSinceEpoch: 0), device: address,
            kind: .info(name: "Polar H10", location: .chest, battery: nil, manufacturer: nil, model: nil))
        let infoLine = renderer.render(info) ?? ""
        #expect(infoLine.hasSuffix("  D2:4B:7E:10:20:30  Polar H10: worn on the chest\n"), "\(infoLine)")
        let report = SessionReport(
            connectedSeconds: 4, measurements: 4, minimumBPM: 88, averageBPM: 89, maximumBPM: 90)
        let summary =
            renderer.render(
                MonitorEvent(
                    time: Timestamp(millisecondsSinceEpoch: 0), device: address, kind: .summary(report)))
            ?? ""
        #expect(
            summary.hasSuffix("  D2:4B:7E:10:20:30  -- summary: connected 0:04, 88/89/90 bpm min/avg/max\n"))
        #expect(summary.components(separatedBy: "D2:4B:7E:10:20:30").count == 2, "\(summary)")
    }

    /// A summary too long for the terminal is a line per group, never wrapped mid-word; into a
    /// pipe it stays one line (#26 item 11).
    @Test func aLongSummaryBreaksBetweenGroupsOnANarrowTerminal() {
        let report = SessionReport(
            connectedSeconds: 724, measurements: 700, minimumBPM: 62, averageBPM: 71, maximumBPM: 84,
            zoneSeconds: [0, 60, 664], hrv: HRVMetrics(beats: 700, artefacts: 2, rmssd: 45.2, alpha1: 0.85))
        let event = MonitorEvent(
            time: Timestamp(millisecondsSinceEpoch: 0), device: address, kind: .summary(report))
        var narrow = TextLinesRenderer(width: { 100 })
        let lines = (narrow.render(event) ?? "").split(separator: "\n")
        #expect(lines.count == 3, "\(lines)")
        for line in lines { #expect(line.count <= 99, "\(line.count): \(line)") }
        #expect(lines.first?.hasSuffix("connected 12:04, 62/71/84 bpm min/avg/max") == true, "\(lines)")
        #expect(lines.dropFirst().first?.hasSuffix("time in zones: Z1 1:00, Z2 11:04") == true, "\(lines)")
        var piped = TextLinesRenderer(width: { nil })
        #expect((piped.render(event) ?? "").split(separator: "\n").count == 1)
        var live = LiveRenderer(colour: false, width: { 100 })
        let scrolled = live.render(event) ?? ""
        #expect(scrolled.split(separator: "\n").count == 3, "\(scrolled.debugDescription)")
    }

    @Test func colourOnlyWhenAsked() throws {
        var plain = LiveRenderer(colour: false)
        var coloured = LiveRenderer(colour: true)
        let event = try measurement([0x06, 0x48], at: 0)
        #expect(plain.render(event)?.contains("\u{1B}[1;31m") == false)
        #expect(coloured.render(event)?.contains("\u{1B}[1;31m") == true)
    }
}

extension WatchRenderingTests {
    @Test func liveLineColoursTheBPMByZoneShowsHRVAndRingsForAnAlert() throws {
        var renderer = LiveRenderer(colour: true)
        let m = try HeartRateMeasurement(decoding: [0x16, 0x9B, 0x4D, 0x03])  // 155 bpm
        let line = renderer.render(MonitorEvent(device: address, kind: .measurement(m, zone: 3))) ?? ""
        // Zone 3 is green; without zones the BPM stays bold red.
        #expect(line.contains("\u{1B}[1;32m♥ 155 bpm\u{1B}[0m  zone 3"))
        let metrics = HRVMetrics(beats: 70, rmssd: 41.6, alpha1: 0.734)
        #expect(
            renderer.render(MonitorEvent(device: address, kind: .hrv(metrics)))?.contains(
                "RMSSD 42 ms α1 0.73") == true)
        let alert = HeartRateAlert(direction: .above, bpm: 155, bound: 150)
        let alerted = renderer.render(MonitorEvent(device: address, kind: .alert(alert))) ?? ""
        #expect(alerted.hasPrefix("\u{07}"))
        #expect(alerted.contains("!! heart rate above 150 bpm: 155 bpm"))
        var plain = LiveRenderer(colour: false)
        #expect(
            plain.render(MonitorEvent(device: address, kind: .measurement(m, zone: 3)))?.contains("\u{1B}[1")
                == false)
    }

    @Test func textLinesForHRVAlertAndSummary() {
        var renderer = TextLinesRenderer()
        let metrics = HRVMetrics(
            beats: 70, artefacts: 1, rmssd: 41.64, pnn50: 12.5, meanHR: 71.04, alpha1: 0.734)
        #expect(
            renderer.render(
                MonitorEvent(time: Timestamp(millisecondsSinceEpoch: 0), device: address, kind: .hrv(metrics))
            )?
            .hasSuffix(
                "  HRV  RMSSD 41.6 ms  pNN50 12.5 %  mean HR 71.0 bpm  alpha1 0.73  (70 beats, 1 artefact corrected)\n"
            )
                == true)
        let alert = HeartRateAlert(direction: .below, bpm: 48, bound: 50)
        #expect(
            renderer.render(MonitorEvent(device: address, kind: .alert(alert)))?.hasSuffix(
                "  !! heart rate below 50 bpm: 48 bpm\n") == true)
    }
}

/// The live line on a real terminal: never wider than it, out of the way of stderr.
@Suite struct LiveLineTests {
    /// `--ecg` on a terminal: the trace's R peaks are its spikes, and the ECG's heart rate stands
    /// beside the strap's once two RR intervals came.
    @Test func theLiveLineShowsTheECGTraceAndItsHeartRate() throws {
        var renderer = LiveRenderer(colour: false, width: { 200 })
        _ = renderer.render(try Self.measurement([0x06, 71], at: 0))
        // 2.5 s at 130 Hz, flat at 40 µV but for an R wave of 1200 µV every 0.8 s (104 samples).
        let samples: [Int32] = (0..<325).map { $0 % 104 == 50 ? 1200 : 40 }
        let drawn = renderer.render(
            MonitorEvent(
                device: "D2:4B:7E:10:20:30",
                kind: .ecg(ECGFrame(sensorNanoseconds: 0, rateHz: 130, microvolts: samples))))
        let line = try #require(drawn)
        // The trace, then the sparkline's field.
        let trace = try #require(line.split(separator: "ECG ").last?.split(separator: " ").first)
        #expect(trace.count == ECGTrace.width)
        #expect(trace.filter { $0 == "█" }.count == 3, "\(trace)")
        #expect(trace.filter { $0 == "▁" }.count == ECGTrace.width - 3, "\(trace)")
        #expect(!line.contains("ECG 7"), "no ECG heart rate before two RR intervals")
        for rr in [nil, 800, 820.5] as [Double?] {
            _ = renderer.render(
                MonitorEvent(
                    device: "D2:4B:7E:10:20:30",
                    kind: .ecgBeat(ECGBeat(sensorNanoseconds: 0, rrMilliseconds: rr))))
        }
        let redrawn = renderer.render(
            MonitorEvent(
                device: "D2:4B:7E:10:20:30",
                kind: .ecg(ECGFrame(sensorNanoseconds: 0, rateHz: 130, microvolts: [40]))))
        let again = try #require(redrawn)
        // 60000 / 810.25 ms
        #expect(again.contains("ECG 74 bpm "), "\(again)")
        #expect(again.hasPrefix("\r\u{1B}[2K♥ 71 bpm"))
    }

    static func measurement(_ bytes: [UInt8], at time: Int64 = 0) throws -> MonitorEvent {
        MonitorEvent(
            time: Timestamp(millisecondsSinceEpoch: time), device: "D2:4B:7E:10:20:30",
            kind: .measurement(try HeartRateMeasurement(decoding: bytes), zone: 2))
    }

    /// Fields are left off, the least needed first, until the line fits; the BPM always stays.
    @Test func fitsTheTerminalsWidth() throws {
        for columns in [10, 20, 30, 40, 60, 80, 120] {
            var renderer = LiveRenderer(colour: false, width: { columns })
            _ = renderer.render(MonitorEvent(device: "D2:4B:7E:10:20:30", kind: .battery(percent: 55)))
            let line = renderer.render(try Self.measurement([0x16, 0x48, 0x4D, 0x03, 0x20, 0x03])) ?? ""
            let visible = line.replacingOccurrences(of: "\r\u{1B}[2K", with: "")
            #expect(visible.hasPrefix("♥ 72 bpm"))
            if columns >= 20 { #expect(visible.count <= columns - 1, "\(columns): \(visible)") }
        }
        var wide = LiveRenderer(colour: false, width: { 120 })
        let all = wide.render(try Self.measurement([0x16, 0x48, 0x4D, 0x03])) ?? ""
        #expect(all.contains("zone 2") && all.contains("contact ✓") && all.contains("RR 825 ms"))
        var narrow = LiveRenderer(colour: false, width: { 24 })
        let some = narrow.render(try Self.measurement([0x16, 0x48, 0x4D, 0x03])) ?? ""
        #expect(some.contains("zone 2") && !some.contains("RR"), "\(some)")
    }

    /// A warning takes the live line off the screen and draws it again after.
    @Test func stepsAsideForStderr() throws {
        var renderer = LiveRenderer(colour: false, width: { 80 })
        #expect(renderer.suspend() == nil, "nothing on the screen yet")
        _ = renderer.render(try Self.measurement([0x06, 0x48]))
        #expect(renderer.suspend() == "\r\u{1B}[2K")
        #expect(renderer.resume()?.hasPrefix("\r\u{1B}[2K♥ 72 bpm") == true)
        var table = LiveTableRenderer(colour: false, width: { 80 })
        _ = table.render(try Self.measurement([0x06, 0x48]))
        _ = table.render(
            MonitorEvent(
                device: "C0:FF:EE:00:00:02",
                kind: .measurement(try HeartRateMeasurement(decoding: [0x06, 0x50]), zone: nil)))
        #expect(table.suspend() == "\u{1B}[1A\r\u{1B}[J")
        #expect(table.resume()?.contains("♥ 80") == true)
    }
}
