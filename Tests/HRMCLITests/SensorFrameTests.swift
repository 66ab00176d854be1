import Foundation
import Monitor
import PolarPMD
import SessionLibrary
import Testing

/// `--ecg`/`--acc` without a strap: PMD frames as an H10 sends them, through the reader that turns
/// them into `ecg`, `acc` and `ecg_beat` events, the JSON lines those print and the recording's
/// `pmd` lines.
@Suite struct SensorFrameTests {
    static let device = "A0:9E:1A:12:34:56"
    static let start = PMDTime.h10DefaultClock + 5_000_000_000

    /// An ECG in µV at 130 Hz with a sharp R wave (1.2 mV) at each of `beats` (seconds), a T wave
    /// after it and a slow baseline wander.
    static func ecg(seconds: Double, beats: [Double]) -> [Int32] {
        (0..<Int(seconds * 130)).map { index in
            let t = Double(index) / 130
            var value = 80 * sin(2 * Double.pi * 0.25 * t)
            for beat in beats where abs(t - beat) < 0.5 {
                let d = t - beat
                value += 1200 * exp(-d * d / (2 * 0.012 * 0.012))
                value -= 150 * exp(-(d + 0.03) * (d + 0.03) / (2 * 0.01 * 0.01))
                value += 250 * exp(-(d - 0.25) * (d - 0.25) / (2 * 0.04 * 0.04))
            }
            return Int32(value.rounded())
        }
    }

    /// Frames of 73 samples, each stamped with its last sample's time; the frames in `drop` never
    /// arrive.
    static func ecgFrames(_ microvolts: [Int32], drop: Set<Int> = []) -> [[UInt8]] {
        stride(from: 0, to: microvolts.count - 72, by: 73).enumerated().compactMap { number, index in
            guard !drop.contains(number) else { return nil }
            let last = start + UInt64((Double(index + 72) * 1e9 / 130).rounded())
            return PMDDataFrame.encode(
                type: .ecg, timestamp: last, frameType: 0,
                content: PMDECGValues.encodeType0(Array(microvolts[index..<(index + 73)])))
        }
    }

    static func reader(_ streams: SensorStreams) -> FrameReader {
        var decoder = PMDDecoder()
        if streams.ecg { decoder.started(.ecg, selected: .h10ECG) }
        if let acc = streams.acc {
            decoder.started(.acc, selected: .h10ACC(rate: acc.rateHz, rangeG: acc.rangeG))
        }
        return FrameReader(device: device, streams: streams, decoder: decoder)
    }

    static func beats(_ events: [MonitorEvent]) -> [ECGBeat] {
        events.compactMap { if case .ecgBeat(let beat) = $0.kind { beat } else { nil } }
    }

    @Test func everyFrameIsAnECGEventWithItsSamplesAndTimes() throws {
        let samples = Self.ecg(seconds: 20, beats: stride(from: 0.7, to: 19.5, by: 0.8).map { $0 })
        var reader = Self.reader(SensorStreams(ecg: true))
        let frames = Self.ecgFrames(samples)
        var seen: [ECGFrame] = []
        for bytes in frames {
            let events = reader.read(bytes)
            guard case .ecg(let frame)? = events.first?.kind else {
                Issue.record(
                    "the first event of a frame is not ecg: \(events.first.map { "\($0.kind)" } ?? "none")")
                return
            }
            #expect(events.first?.payload == bytes)
            seen.append(frame)
        }
        #expect(seen.count == frames.count)
        #expect(seen.flatMap(\.microvolts) == Array(samples.prefix(frames.count * 73)))
        // Sample i of frame n is the (73n + i)-th sample: its time is counted from the start.
        for (number, frame) in seen.enumerated() {
            let expected = Double(Self.start) + Double(73 * number) * 1e9 / 130
            #expect(abs(Double(frame.sensorNanoseconds) - expected) < 2)
            #expect(frame.rateHz == 130)
            #expect(frame.missingSamples == 0)
        }
    }

    @Test func rPeaksAreEcgBeatsWithTheirRR() throws {
        let beatTimes = stride(from: 0.7, to: 29.5, by: 0.75).map { $0 }
        var reader = Self.reader(SensorStreams(ecg: true))
        let events = Self.ecgFrames(Self.ecg(seconds: 30, beats: beatTimes)).flatMap { reader.read($0) }
        let beats = Self.beats(events)
        // The last beat or two are still in the detector's look-ahead when the frames end.
        #expect(beats.count >= beatTimes.count - 2)
        #expect(beats.first?.rrMilliseconds == nil)
        for beat in beats.dropFirst() {
            #expect(
                beat.rrMilliseconds.map { abs($0 - 750) <= 7.7 } == true,
                "rr \(String(describing: beat.rrMilliseconds))")
        }
        for (beat, time) in zip(beats, beatTimes) {
            #expect(abs(Double(beat.sensorNanoseconds) - (Double(Self.start) + time * 1e9)) <= 7.7e6)
        }
    }

    @Test func aLostFrameIsSaidAndBreaksTheRRChain() throws {
        let beatTimes = stride(from: 0.7, to: 29.5, by: 0.75).map { $0 }
        var reader = Self.reader(SensorStreams(ecg: true))
        let frames = Self.ecgFrames(Self.ecg(seconds: 30, beats: beatTimes), drop: [20])
        var events: [MonitorEvent] = []
        var lostSaid: [Int] = []
        for bytes in frames {
            let got = reader.read(bytes)
            for event in got {
                if case .ecg(let frame) = event.kind, frame.missingSamples > 0 {
                    lostSaid.append(frame.missingSamples)
                }
            }
            events += got
        }
        #expect(lostSaid == [73])
        let beats = Self.beats(events)
        // No RR spans the gap: after it, the first beat has none.
        let gapStart = Double(Self.start) + Double(20 * 73) * 1e9 / 130
        let gapEnd = Double(Self.start) + Double(21 * 73) * 1e9 / 130
        let after = beats.filter { Double($0.sensorNanoseconds) > gapEnd }
        #expect(after.first?.rrMilliseconds == nil)
        #expect(beats.compactMap(\.rrMilliseconds).allSatisfy { abs($0 - 750) <= 7.7 })
        #expect(
            !beats.contains {
                Double($0.sensorNanoseconds) > gapStart && Double($0.sensorNanoseconds) < gapEnd
            })
    }

    @Test func accelerationFramesRawAndCompressed() throws {
        let streams = SensorStreams(acc: SensorStreams.Acceleration(rateHz: 50, rangeG: 4))
        var reader = Self.reader(streams)
        let values: [Int32] = (0..<30).flatMap { i -> [Int32] in
            [Int32(i), -Int32(i) * 3, 1000 + Int32(i % 5)]
        }
        let rawFrame = PMDDataFrame.encode(
            type: .acc, timestamp: Self.start, frameType: 1,
            content: try #require(PMDACCValues.encodeRaw(values, frameType: 1)))
        let events = reader.read(rawFrame)
        guard case .acc(let frame)? = events.first?.kind else {
            Issue.record("no acc event: \(events)")
            return
        }
        #expect(events.count == 1)
        #expect(frame.rateHz == 50 && frame.rangeG == 4)
        #expect(frame.milliG.count == 30)
        #expect(frame.milliG.flatMap { [$0.x, $0.y, $0.z] } == values)
        // The last sample is the frame's timestamp; the first 29 samples (at 50 Hz) before it.
        #expect(frame.sensorNanoseconds == Self.start - 29 * 20_000_000)
        let compressed = PMDDataFrame.encode(
            type: .acc, timestamp: Self.start + 600_000_000, frameType: 1, compressed: true,
            content: PMDDeltaCoding.encode(values, channels: 3, resolution: 16))
        guard case .acc(let second)? = reader.read(compressed).first?.kind else {
            Issue.record("the compressed frame gave no acc event")
            return
        }
        #expect(second.milliG.flatMap { [$0.x, $0.y, $0.z] } == values)
    }

    @Test func aFrameThatDoesNotDecodeIsAnErrorWithItsBytes() {
        var reader = Self.reader(SensorStreams(ecg: true))
        let events = reader.read([0x00, 0x01, 0x02])
        guard case .error(let code, _, let hex)? = events.first?.kind else {
            Issue.record("no error event: \(events)")
            return
        }
        #expect(code == .malformedPMDFrame)
        #expect(hex == "000102")
    }

    @Test func jsonLines() {
        let ecg = MonitorEvent(
            time: Timestamp(millisecondsSinceEpoch: 1_764_000_000_000), device: Self.device,
            kind: .ecg(
                ECGFrame(sensorNanoseconds: 599_616_005_000_000_000, rateHz: 130, microvolts: [-12, 0, 1034]))
        )
        #expect(
            MonitorEventJSON.line(ecg)
                == #"{"type":"ecg","time":"2025-11-24T16:00:00.000Z","device":"A0:9E:1A:12:34:56","sensor_ns":599616005000000000,"rate_hz":130,"uv":[-12,0,1034]}"#
        )
        let acc = ecg.with(
            .acc(
                ACCFrame(
                    sensorNanoseconds: 7, rateHz: 200, rangeG: 2, milliG: [(1, -2, 998), (0, 0, 1001)],
                    missingSamples: 4)))
        #expect(
            MonitorEventJSON.line(acc)
                == #"{"type":"acc","time":"2025-11-24T16:00:00.000Z","device":"A0:9E:1A:12:34:56","sensor_ns":7,"rate_hz":200,"range_g":2,"mg":[[1,-2,998],[0,0,1001]],"lost_samples":4}"#
        )
        let first = ecg.with(.ecgBeat(ECGBeat(sensorNanoseconds: 9, rrMilliseconds: nil)))
        #expect(MonitorEventJSON.line(first).hasSuffix(#""sensor_ns":9,"rr_ms":null}"#))
        let next = ecg.with(.ecgBeat(ECGBeat(sensorNanoseconds: 10, rrMilliseconds: 812.308)))
        #expect(MonitorEventJSON.line(next).hasSuffix(#""sensor_ns":10,"rr_ms":812.308}"#))
    }

    @Test func aRecordingKeepsTheFrameRawWithItsSettings() {
        let startInstant = ContinuousInstant.now
        let bytes: [UInt8] = [0x02, 1, 2, 3, 4, 5, 6, 7, 8, 0x01, 0xAB]
        let event = MonitorEvent(
            time: Timestamp(millisecondsSinceEpoch: 1_764_000_000_000),
            instant: startInstant + .milliseconds(1500),
            device: Self.device,
            kind: .acc(ACCFrame(sensorNanoseconds: 1, rateHz: 100, rangeG: 8, milliG: [(1, 2, 3)])),
            payload: bytes)
        #expect(
            RecordingLine.line(event, since: startInstant)
                == #"{"type":"pmd","time":"2025-11-24T16:00:00.000Z","mono_ms":1500.0,"device":"A0:9E:1A:12:34:56","measurement":"acc","rate_hz":100,"range_g":8,"hex":"02010203040506070801ab"}"#
                + "\n")
        let ecg = MonitorEvent(
            time: event.time, instant: event.instant, device: Self.device,
            kind: .ecg(ECGFrame(sensorNanoseconds: 1, rateHz: 130, microvolts: [5])), payload: [0x00, 0xFF])
        #expect(
            RecordingLine.line(ecg, since: startInstant)
                == #"{"type":"pmd","time":"2025-11-24T16:00:00.000Z","mono_ms":1500.0,"device":"A0:9E:1A:12:34:56","measurement":"ecg","rate_hz":130,"hex":"00ff"}"#
                + "\n")
        // A beat is recorded as watch --json prints it, with mono_ms.
        let beat = ecg.with(.ecgBeat(ECGBeat(sensorNanoseconds: 3, rrMilliseconds: 800)))
        #expect(
            RecordingLine.line(beat, since: startInstant).contains(
                #""mono_ms":1500.0,"device":"A0:9E:1A:12:34:56","sensor_ns":3,"rr_ms":800.0}"#))
    }

    @Test func theMailboxHandsValuesOverInOrderAndGivesUpInTime() async {
        let mailbox = ControlPointMailbox()
        mailbox.deliver([1])
        mailbox.deliver([2])
        #expect(await mailbox.next(timeout: .seconds(30)) == [1])
        #expect(await mailbox.next(timeout: .seconds(30)) == [2])
        // Nothing comes: nil once the timeout passes.
        #expect(await mailbox.next(timeout: .milliseconds(20)) == nil)
        // A value delivered while a wait is on its way reaches it.
        async let waited = mailbox.next(timeout: .seconds(30))
        mailbox.deliver([3])
        let third = await waited
        // Delivered before the wait began or during it: either way it is this wait's.
        #expect(third == [3])
        mailbox.drain()
        mailbox.close()
        #expect(await mailbox.next(timeout: .seconds(30)) == nil)
    }
}
