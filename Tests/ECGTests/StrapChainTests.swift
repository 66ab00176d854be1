import ECG
import PolarPMD
import Testing

/// The chain a strap's ECG will take: PMD frames as an H10 sends them (73 samples, its clock a
/// little off 130 Hz), decoded with their sample times, R peaks found, RR from the sensor's times;
/// a lost notification on the way.
@Suite struct StrapChainTests {
    /// Frames of 73 ECG samples at `rate` Hz on the sensor's clock, the last sample of each
    /// timestamped; `drop` frames never arrive.
    static func frames(_ microvolts: [Int32], rate: Double, start: UInt64, drop: Set<Int> = []) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var index = 0
        var number = 0
        while index + 73 <= microvolts.count {
            let last = start + UInt64((Double(index + 72) * 1e9 / rate).rounded())
            if !drop.contains(number) {
                frames.append(
                    PMDDataFrame.encode(
                        type: .ecg, timestamp: last, frameType: 0,
                        content: PMDECGValues.encodeType0(Array(microvolts[index..<(index + 73)]))))
            }
            index += 73
            number += 1
        }
        return frames
    }

    /// Decodes `frames` and feeds the detector, resetting it after a loss as a caller must.
    static func peaks(_ frames: [[UInt8]]) throws -> (peaks: [RPeak], lost: Int) {
        var decoder = PMDDecoder()
        decoder.started(.ecg, selected: .h10ECG)
        var detector = RPeakDetector(sampleRate: 130)
        var peaks: [RPeak] = []
        var lost = 0
        for bytes in frames {
            let decoded = try decoder.decode(bytes[...])
            if decoded.missingSamples > 0 {
                lost += decoded.missingSamples
                peaks += detector.finish()
                detector.reset()
            }
            guard case .ecg(let samples) = decoded.data else { continue }
            for sample in samples {
                if let peak = detector.process(Double(sample.microvolts), time: Int64(sample.timestamp)) {
                    peaks.append(peak)
                }
            }
        }
        return (peaks + detector.finish(), lost)
    }

    @Test func rrFromTheSensorsClock() throws {
        // The strap's clock runs 0.02 % fast: its 130 Hz are 130.026 Hz of true time.
        let rate = 130.026
        let beats = stride(from: 0.9, to: 119, by: 0.85).map { $0 }
        let ecg = RPeakDetectorTests.ecg(seconds: 120, rate: rate, peaks: beats, offset: -300).map {
            Int32($0.rounded())
        }
        let start = PMDTime.h10DefaultClock + 23_171_427_290
        let (peaks, lost) = try Self.peaks(Self.frames(ecg, rate: rate, start: start))
        #expect(lost == 0)
        #expect(peaks.count == beats.count)
        #expect(peaks.first?.rr == nil)
        for peak in peaks.dropFirst() {
            // 850 ms apart, to a sample (7.7 ms).
            #expect(peak.rrMilliseconds.map { abs($0 - 850) <= 7.7 } == true)
        }
        // The peak times are the sensor's: within a sample of where the beats were put.
        for (peak, beat) in zip(peaks, beats) {
            let expected = Double(start) + beat * 1e9
            #expect(abs(Double(peak.time) - expected) <= 7.7e6)
        }
    }

    @Test func aLostNotificationBreaksTheRRChain() throws {
        let beats = stride(from: 0.9, to: 59, by: 0.8).map { $0 }
        let ecg = RPeakDetectorTests.ecg(seconds: 60, rate: 130, peaks: beats).map { Int32($0.rounded()) }
        let (peaks, lost) = try Self.peaks(
            Self.frames(ecg, rate: 130, start: 700_000_000_000_000_000, drop: [40]))
        #expect(lost == 73)
        // Frame 40 held samples 2920 to 2992 (22.5 s to 23 s): its beat is gone, and the first beat
        // after the loss has no RR, since the detector started afresh.
        let afterLoss = peaks.filter { Double($0.time - 700_000_000_000_000_000) / 1e9 > 23 }
        #expect(afterLoss.first?.rr == nil)
        #expect(peaks.filter { $0.rr == nil }.count == 2)
        for peak in peaks where peak.rr != nil {
            #expect(
                peak.rrMilliseconds.map { abs($0 - 800) <= 7.7 } == true,
                "\(peak.sampleIndex) \(Double(peak.time - 700_000_000_000_000_000) / 1e9) \(peak.rrMilliseconds ?? 0)"
            )
        }
        #expect(peaks.count >= beats.count - 2)
    }
}
