import Testing

@testable import ECG

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The detector on ECGs made here, with beats where the test put them. (Tests/ECGCheck compares it
/// with neurokit2 on its simulated ECGs: ECGIndependentTests.)
@Suite struct RPeakDetectorTests {
    /// A PQRST-like beat of Gaussian waves around an R peak at time 0 (seconds), in microvolts.
    static func beat(_ t: Double) -> Double {
        func wave(_ centre: Double, _ width: Double, _ height: Double) -> Double {
            height * exp(-(t - centre) * (t - centre) / (2 * width * width))
        }
        return wave(-0.2, 0.025, 150) + wave(-0.03, 0.01, -120) + wave(0, 0.012, 1400)
            + wave(0.03, 0.01, -300)
            + wave(0.28, 0.06, 350)
    }

    /// `seconds` of ECG at `rate` Hz with R peaks at `peaks` (seconds), an offset and a slow wander.
    static func ecg(seconds: Double, rate: Double, peaks: [Double], offset: Double = 0) -> [Double] {
        (0..<Int(seconds * rate)).map { index in
            let t = Double(index) / rate
            var value = offset + 80 * sin(2 * Double.pi * 0.2 * t)
            for peak in peaks where abs(t - peak) < 0.6 { value += beat(t - peak) }
            return value
        }
    }

    /// The peaks the detector reports for `samples` at `rate`, times in nanoseconds from `start`.
    static func detect(_ samples: [Double], rate: Double, start: Int64 = 0) -> [RPeak] {
        var detector = RPeakDetector(sampleRate: rate)
        var peaks: [RPeak] = []
        for (index, value) in samples.enumerated() {
            let time = start + Int64((Double(index) * 1e9 / rate).rounded())
            if let peak = detector.process(value, time: time) { peaks.append(peak) }
        }
        return peaks + detector.finish()
    }

    @Test func highPassMatchesScipysButterworth() {
        // scipy.signal.sosfilt(butter(5, 0.5, "highpass", output="sos", fs=130), impulse).
        let expected = [
            0.9616519010650169, -0.07520365833757892, -0.07225471126101475, -0.0693774844567494,
            -0.0665708946385342, -0.06383386676412568, -0.06116533403528473, -0.05856423789777492,
            -0.05602952804135919, -0.05356016239979399, -0.05115510715081975, -0.04881333671614591,
        ]
        var filter = ButterworthHighPass(order: 5, cutoff: 0.5, sampleRate: 130)
        _ = filter.step(0)  // settles at rest
        let response = (0..<12).map { filter.step($0 == 0 ? 1 : 0) }
        for (value, reference) in zip(response, expected) { #expect(abs(value - reference) < 1e-12) }
    }

    @Test func highPassSettlesOnTheFirstSample() {
        var filter = ButterworthHighPass(order: 5, cutoff: 0.5, sampleRate: 130)
        let outputs = (0..<50).map { _ in filter.step(12_345) }
        for output in outputs { #expect(abs(output) < 1e-6) }
    }

    @Test(arguments: [130.0, 250, 500]) func peaksWhereTheBeatsAre(rate: Double) {
        var peaks: [Double] = []
        var t = 0.8
        var index = 0
        while t < 60 {
            peaks.append(t)
            // 60 to 90 bpm, varying beat to beat.
            t += [0.80, 0.72, 0.96, 0.68, 0.88, 1.0][index % 6]
            index += 1
        }
        let found = Self.detect(Self.ecg(seconds: 60, rate: rate, peaks: peaks, offset: 8000), rate: rate)
        #expect(found.count == peaks.count)
        // Beats on a sample at 250 and 500 Hz (multiples of 40 ms): found there exactly. At 130 Hz
        // they fall between samples: within one.
        let tolerance = rate == 130 ? 1.000001 : 0.000001
        for (peak, truth) in zip(found, peaks) {
            #expect(
                abs(Double(peak.sampleIndex) - truth * rate) <= tolerance,
                "peak \(peak.sampleIndex) for \(truth * rate)")
        }
        #expect(found.first?.rr == nil)
        for (pair, peak) in zip(zip(peaks, peaks.dropFirst()), found.dropFirst()) {
            let rr = (pair.1 - pair.0) * 1000
            #expect(peak.rrMilliseconds.map { abs($0 - rr) <= 1000 / rate + 0.5 } == true)
        }
    }

    @Test func timesComeFromTheSamples() {
        let rate = 130.0
        let peaks = stride(from: 1.0, to: 20, by: 0.75).map { $0 }
        let start: Int64 = 599_616_023_171_427_290
        let found = Self.detect(Self.ecg(seconds: 20, rate: rate, peaks: peaks), rate: rate, start: start)
        #expect(found.count == peaks.count)
        for peak in found {
            #expect(peak.time == start + Int64((Double(peak.sampleIndex) * 1e9 / rate).rounded()))
        }
    }

    @Test func resetStartsAfresh() {
        let rate = 130.0
        let samples = Self.ecg(seconds: 10, rate: rate, peaks: [1, 2, 3, 4, 5, 6, 7, 8, 9])
        var detector = RPeakDetector(sampleRate: rate)
        var before: [RPeak] = []
        for (index, value) in samples.prefix(650).enumerated() {
            if let peak = detector.process(value, time: Int64(index)) { before.append(peak) }
        }
        #expect(before.count >= 3)
        detector.reset()
        var after: [RPeak] = []
        for (index, value) in samples.dropFirst(650).enumerated() {
            if let peak = detector.process(value, time: Int64(index)) { after.append(peak) }
        }
        after += detector.finish()
        #expect(after.first?.rr == nil)
        #expect(after.first?.sampleIndex == 6 * 130 - 650)
    }

    @Test func latencyIsUnderHalfASecond() {
        let detector = RPeakDetector(sampleRate: 130)
        #expect(detector.latency == 57)
        #expect(Double(detector.latency) / 130 < 0.5)
    }

    @Test func silenceAndNoiseAloneFindLittle() {
        var random = UInt64(7)
        func noise() -> Double {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(random >> 11) / Double(1 << 53) - 0.5
        }
        #expect(Self.detect(Array(repeating: 1000, count: 1300), rate: 130).isEmpty)
        // White noise has no QRS: peaks may be found, but never closer than 0.3 s.
        let found = Self.detect((0..<1300).map { _ in 20 * noise() }, rate: 130)
        for (a, b) in zip(found, found.dropFirst()) { #expect(b.sampleIndex - a.sampleIndex > 39) }
    }

    @Test func valuesThatAreNotNumbersAndOddRates() {
        let rate = 130.0
        var samples = Self.ecg(seconds: 12, rate: rate, peaks: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
        samples[400] = .nan
        samples[401] = .infinity
        let found = Self.detect(samples, rate: rate)
        #expect(found.count == 11)
        #expect(RPeakDetector(sampleRate: .nan).sampleRate == 10)
        #expect(RPeakDetector(sampleRate: 1e9).sampleRate == 10_000)
        #expect(RPeakDetector(sampleRate: 0).sampleRate == 10)
    }
}
