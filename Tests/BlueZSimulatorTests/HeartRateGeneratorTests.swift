import HeartRate
import Testing

@testable import BlueZSimulator

@Suite struct HeartRateGeneratorTests {
    /// Ten minutes at 1 Hz: every frame decodes, values stay plausible, and the RR intervals add
    /// up to the time that passed (every beat is reported once, none invented).
    @Test func realisticStreamIsConsistent() throws {
        var generator = HeartRateGenerator(source: .realistic(baseBPM: 72, variability: 4))
        var totalRR = 0.0
        var bpms: [UInt16] = []
        for second in 1...600 {
            let m = try HeartRateMeasurement(decoding: generator.next(at: Double(second)))
            #expect(m.sensorContact == .detected)
            #expect(m.valueFormat == .uint8)
            bpms.append(m.heartRate)
            for interval in m.rrIntervals {
                #expect(interval.milliseconds > 250 && interval.milliseconds < 2000)
                totalRR += interval.seconds
            }
        }
        #expect(bpms.allSatisfy { $0 >= 50 && $0 <= 100 })
        #expect(Set(bpms).count > 5, "the heart rate varies")
        #expect(abs(totalRR - 600) < 2.5, "RR intervals cover the elapsed time: \(totalRR)")
    }

    @Test func sameSeedSameStream() {
        var a = HeartRateGenerator(source: .realistic(baseBPM: 120, variability: 6))
        var b = HeartRateGenerator(source: .realistic(baseBPM: 120, variability: 6))
        for t in 1...50 { #expect(a.next(at: Double(t)) == b.next(at: Double(t))) }
    }

    @Test func framesFitTheATTPayload() throws {
        var options = HeartRateGenerator.Options()
        options.format = .uint16
        options.energyStart = 0
        // 4 Hz notifications at a high rate still fit: extra beats wait for the next frame.
        var generator = HeartRateGenerator(source: .realistic(baseBPM: 200, variability: 2), options: options)
        var total = 0.0
        for step in 1...400 {
            let frame = generator.next(at: Double(step) * 5)  // a frame every 5 s: ~17 beats each
            #expect(frame.count <= 20)
            let m = try HeartRateMeasurement(decoding: frame)
            #expect(m.rrIntervals.count <= 7)
            total += m.rrIntervals.reduce(0) { $0 + $1.seconds }
        }
        #expect(total > 0)
    }

    @Test func energyGrowsSaturatesAndResets() throws {
        var options = HeartRateGenerator.Options()
        options.energyStart = 65_500
        options.energyPerMinute = 600
        var generator = HeartRateGenerator(source: .series([100]), options: options)
        var last: UInt16 = 0
        for t in 1...30 {
            let m = try HeartRateMeasurement(decoding: generator.next(at: Double(t)))
            let energy = try #require(m.energyExpended)
            #expect(energy >= last)
            last = energy
        }
        #expect(last == 0xFFFF, "saturates")
        generator.resetEnergyExpended()
        let after = try HeartRateMeasurement(decoding: generator.next(at: 31))
        #expect(try #require(after.energyExpended) < 100)
    }

    @Test func seriesAndRawFramesRepeat() throws {
        var series = HeartRateGenerator(
            source: .series([60, 300]),
            options: {
                var o = HeartRateGenerator.Options()
                o.format = .uint16
                return o
            }())
        #expect(try HeartRateMeasurement(decoding: series.next(at: 1)).heartRate == 60)
        #expect(try HeartRateMeasurement(decoding: series.next(at: 2)).heartRate == 300)
        #expect(try HeartRateMeasurement(decoding: series.next(at: 3)).heartRate == 60)

        var raw = HeartRateGenerator(source: .frames([[0x16, 0x48, 0x4D, 0x03], [0x0E, 0x48, 0x01]]))
        #expect(raw.next(at: 1) == [0x16, 0x48, 0x4D, 0x03])
        #expect(raw.next(at: 2) == [0x0E, 0x48, 0x01])
        #expect(raw.next(at: 3) == [0x16, 0x48, 0x4D, 0x03])
    }

    @Test func contactChanges() throws {
        var generator = HeartRateGenerator(source: .series([70]))
        generator.contact = .notDetected
        #expect(try HeartRateMeasurement(decoding: generator.next(at: 1)).sensorContact == .notDetected)
    }
}

/// The beats an ECG of the strap shows (`beats(through:)`, simulated ahead of the frames) are
/// the ones its frames report, each once its time has come.
@Suite struct HeartRateGeneratorBeatsTests {
    @Test func framesReportTheBeatsSimulatedAhead() throws {
        var generator = HeartRateGenerator(source: .realistic(baseBPM: 75, variability: 8))
        var reported: [Double] = []
        var beats: [Double] = []
        for step in 1...240 {
            let time = Double(step) * 0.25
            // The ECG asks half a second ahead four times between frames.
            for ahead in 0..<4 { beats = generator.beats(through: time + 0.5 + Double(ahead) * 0.06) }
            let m = try HeartRateMeasurement(decoding: generator.next(at: time))
            reported += m.rrIntervals.map(\.milliseconds)
            // Every beat reported so far has ended by this frame's time.
            let ended = beats.filter { $0 <= time }
            #expect(reported.count <= ended.count)
        }
        // Beats after the last frame's time (60 s) are not reported yet.
        let ended = beats.filter { $0 <= 60 }
        let intervals = zip(ended.dropFirst(), ended).map { ($0 - $1) * 1000 }
        try #require(reported.count > 50)
        // The reported RR are the intervals between the beats, to a 1/1024 s tick.
        let tail = Array(intervals.suffix(reported.count - 1))
        let reportedTail = Array(reported.suffix(tail.count))
        let within = zip(tail, reportedTail).prefix(while: { abs($0 - $1) <= 1 }).count
        #expect(within >= tail.count - 3, "RR \(reportedTail.prefix(5)) vs beats \(tail.prefix(5))")
    }

    @Test func aGeneratorNeverAskedAheadIsUnchanged() {
        // Asking for the beats through each frame's own time changes nothing in the frames.
        var plain = HeartRateGenerator(source: .realistic(baseBPM: 72, variability: 4))
        var asked = HeartRateGenerator(source: .realistic(baseBPM: 72, variability: 4))
        for t in 1...60 {
            let frame = plain.next(at: Double(t))
            #expect(asked.next(at: Double(t)) == frame)
            #expect(asked.beats(through: Double(t)).last.map { $0 <= Double(t) } ?? true)
        }
        #expect(HeartRateGenerator(source: .series([60])).beatsIsEmpty)
    }
}

extension HeartRateGenerator {
    /// Whether a generator of this source gives no beats (it is not realistic).
    fileprivate var beatsIsEmpty: Bool {
        var copy = self
        return copy.beats(through: 10).isEmpty
    }
}
