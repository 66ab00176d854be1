import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import SessionLibrary

/// Reading a recording with a Polar H10's streams (PMDRecordingFixture): what the index keeps is
/// what it keeps of the recording without them, the stretches decode where the frames put them,
/// and without `ecg_beat` lines the export finds the R peaks itself.
@Suite struct StreamReadingTests {
    @Test func theIndexSummaryIgnoresStreamLines() throws {
        let fixture = PMDRecordingFixture()
        let with = try RecordedSession(text: fixture.text, source: "h10", keepingLines: false)
        let without = try RecordedSession(text: fixture.withoutStreams, source: "plain", keepingLines: false)
        #expect(with.measurements.count == without.measurements.count)
        #expect(with.measurements.count > 10)
        #expect(with.segments == without.segments)
        #expect(with.straps == without.straps)
        #expect(with.streams.items.isEmpty, "streams are read only when asked")
        #expect(
            RecordingSummary(with, text: fixture.text, source: "h10")
                == RecordingSummary(without, text: fixture.withoutStreams, source: "plain"))
    }

    @Test func stretchesDecodeWhereTheFramesPutThem() throws {
        let fixture = PMDRecordingFixture()
        let session = try RecordedSession(
            text: fixture.text, source: "h10", keepingLines: false, readingStreams: true)
        #expect(session.streams.frameCount == 17 + 9 + 49)
        #expect(session.streams.beatCount == fixture.rrWritten.count)
        let decoded = SensorStretches.decode(session.streams, device: PMDRecordingFixture.device)
        #expect(decoded.unreadable.isEmpty)
        try #require(decoded.stretches.count == 2)
        for (stretch, expected) in zip(decoded.stretches, fixture.stretches) {
            let ecg = try #require(stretch.ecg)
            #expect(ecg.samples.map { Int64($0.timestamp) } == expected.ecgReceived.map(\.0))
            #expect(ecg.samples.map(\.microvolts) == expected.ecgReceived.map(\.1))
            #expect((ecg.slots.last ?? 0) + 1 == expected.ecg.count)
            #expect(stretch.offset == expected.offset)
        }
        #expect(decoded.stretches[0].acc?.samples.count == 49 * 40)
        #expect(decoded.stretches[1].acc == nil)
        #expect(decoded.stretches[1].end == .ended)
        guard case .disconnected = decoded.stretches[0].end else {
            Issue.record("the first stretch ends at the disconnection: \(decoded.stretches[0].end)")
            return
        }
    }

    @Test func withoutBeatLinesTheExportFindsThePeaks() throws {
        let fixture = PMDRecordingFixture()
        let session = try RecordedSession(
            text: fixture.withoutBeats, source: "h10", keepingLines: false, readingStreams: true)
        let decoded = SensorStretches.decode(session.streams, device: nil)
        let output = StreamExport.edf(decoded, beats: [], equipment: nil)
        #expect(output.peaks == .detected)
        try #require(output.files.count == 2)
        for (file, stretch) in zip(output.files, fixture.stretches) {
            let found = file.annotations.filter { $0.text == "R" }.map {
                Int((Double($0.onset) * 130 / 1e9).rounded())
            }
            // Every peak found is a true one (to a sample), and most true ones are found (the
            // detector settles for a second after each start and loss).
            for slot in found {
                #expect(stretch.peakSlots.contains { abs($0 - slot) <= 1 }, "a peak at slot \(slot)")
            }
            let hits = stretch.peakSlots.filter { peak in found.contains { abs($0 - peak) <= 1 } }.count
            #expect(
                Double(hits) >= 0.7 * Double(stretch.peakSlots.count), "\(hits) of \(stretch.peakSlots.count)"
            )
        }
        // With the beats, the annotations are theirs exactly.
        let recorded = try RecordedSession(
            text: fixture.text, source: "h10", keepingLines: false, readingStreams: true)
        var beats: [RecordedStreams.Beat] = []
        for case .beat(let beat) in recorded.streams.items { beats.append(beat) }
        let withBeats = StreamExport.edf(
            SensorStretches.decode(recorded.streams, device: nil), beats: beats, equipment: nil)
        #expect(withBeats.peaks == .recorded)
        for (file, stretch) in zip(withBeats.files, fixture.stretches) {
            #expect(
                file.annotations.filter { $0.text == "R" }.map(\.onset)
                    == stretch.peakSlots.map { (Int64($0) * 1_000_000_000 + 65) / 130 })
        }
    }

    @Test func aLongLossStartsANewStretch() throws {
        let fixture = PMDRecordingFixture()
        // The second stretch's frames without the lines between (no disconnection): a loss of
        // seconds inside one connection, longer than the 5 s an export fills.
        let kept = fixture.lines.filter { !($0.kind == "status" && $0.text.contains("connect")) }
        let text = PMDRecordingFixture.join(kept)
        let session = try RecordedSession(
            text: text, source: "h10", keepingLines: false, readingStreams: true)
        let decoded = SensorStretches.decode(session.streams, device: nil)
        try #require(decoded.stretches.count == 2)
        guard case .interrupted(let lost) = decoded.stretches[0].end else {
            Issue.record("ended by \(decoded.stretches[0].end)")
            return
        }
        #expect(lost > SensorStretches.longestFill)
        let file = try #require(StreamExport.edf(decoded, beats: [], equipment: nil).files.first)
        #expect(file.annotations.last?.text == "ECG samples lost")
    }

    @Test func integersReadExactlyPastADoublesPrecision() throws {
        var text = #"{"sensor_ns":849000000000000123,"rr":-12,"x":1.5,"big":99999999999999999999}"#
        text.withUTF8 { buffer in
            let bytes = UnsafeRawBufferPointer(buffer)
            guard let line = FlatJSONLine.scan(bytes) else {
                Issue.record("a flat line")
                return
            }
            #expect(line.integer("sensor_ns") == 849_000_000_000_000_123)
            #expect(line.integer("rr") == -12)
            #expect(line.integer("x") == nil)
            #expect(line.integer("big") == nil)
            #expect(line.integer("none") == nil)
        }
    }

    /// `ecg_beat` lines read the same in place and as text (white space sends a line to
    /// `JSONValue`), give RR intervals only with `--rr-source ecg`, and measurements none then.
    @Test func ecgBeatLinesReadTheSameEitherWay() throws {
        let beat =
            #"{"type":"ecg_beat","time":"2026-11-26T07:00:01.000Z","mono_ms":1,"device":"A0:9E:1A:12:34:56","sensor_ns":849000000553846176,"rr_ms":812.25}"#
        let first = beat.replacingOccurrences(of: "812.25", with: "null")
        let outOfRange = beat.replacingOccurrences(of: "812.25", with: "6000")
        let measurement =
            #"{"type":"measurement","time":"2026-11-26T07:00:01.000Z","mono_ms":1,"device":"A0:9E:1A:12:34:56","hex":"104b3303"}"#
        func fast(_ line: String, _ source: HRVTracker.RRSource) -> RRLine? {
            var parser = RRLineParser(source: source)
            var text = line
            return text.withUTF8 { parser.readFast(UnsafeRawBufferPointer($0))?.line }
        }
        func slow(_ line: String, _ source: HRVTracker.RRSource) throws -> RRLine {
            var parser = RRLineParser(source: source)
            return try parser.parse(line.replacingOccurrences(of: ",", with: ", "))
        }
        #expect(fast(beat, .ecg) == .ecgBeat(812.25))
        #expect(try slow(beat, .ecg) == .ecgBeat(812.25))
        #expect(fast(first, .ecg) == .ecgBeat(nil))
        #expect(try slow(first, .ecg) == .ecgBeat(nil))
        #expect(fast(beat, .strap) == .skipped)
        #expect(try slow(beat, .strap) == .skipped)
        #expect(fast(measurement, .ecg) == .skipped)
        #expect(fast(measurement, .strap) == .intervals([819 * 1000 / 1024.0]))
        #expect(fast(outOfRange, .ecg) == nil, "an error is the text reader's to tell")
        #expect(throws: RRLineError.self) { try slow(outOfRange, .ecg) }
    }
}
