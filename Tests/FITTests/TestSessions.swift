import FIT

/// Generated sessions for the tests: deterministic, no randomness.
enum TestSessions {
    /// 2024-05-01T06:30:00.250Z in Unix milliseconds: not on a whole second, so rounding down shows.
    static let start: Int64 = 1_714_545_000_250

    /// A session of `connected` seconds, with a drop of `dropSeconds` after `dropAfter` seconds
    /// (none when nil): one sample a second of connected time, heart rates in a slow wave around
    /// 120, and RR intervals to match (60 / HR seconds, with a small alternation), as many as fit
    /// in the connected time.
    static func session(
        connected seconds: Int, dropAfter: Int? = nil, dropSeconds: Int = 30,
        sport: FITActivity.Sport = .running,
        serialNumber: UInt32? = 123_456_789
    ) -> FITActivity {
        var segments: [ClosedRange<Int64>] = []
        var samples: [FITActivity.Sample] = []
        var rr: [Double] = []
        var segmentStart = start
        var time = start
        var beatDebt = 0.0
        for second in 0..<seconds {
            if let dropAfter, second == dropAfter {
                segments.append(segmentStart...time)
                time += Int64(dropSeconds) * 1000
                segmentStart = time
            }
            let heartRate = 120 + Int((30 * sine(Double(second) / 97)).rounded())
            samples.append(FITActivity.Sample(time: time + 400, heartRate: UInt8(heartRate)))
            // Beats inside this second: each lasts 60 / HR s, alternating ±15 ms.
            beatDebt += 1
            while beatDebt > 0 {
                let beat = 60 / Double(heartRate) + (rr.count % 2 == 0 ? 0.015 : -0.015)
                rr.append((beat * 1000).rounded() / 1000)
                beatDebt -= beat
            }
            time += 1000
        }
        segments.append(segmentStart...time)
        let heartRates = samples.map { Int($0.heartRate) }
        return FITActivity(
            start: start, samples: samples, rrSeconds: rr, segments: segments, sport: sport,
            averageHeartRate: heartRates.isEmpty
                ? nil : UInt8(clamping: (heartRates.reduce(0, +) + heartRates.count / 2) / heartRates.count),
            maximumHeartRate: heartRates.max().map { UInt8(clamping: $0) }, serialNumber: serialNumber)
    }

    /// sin(x) by its Taylor series after reducing x to [-π, π]: enough for test data, no Foundation.
    static func sine(_ x: Double) -> Double {
        let twoPi = 2 * Double.pi
        var reduced = x - (x / twoPi).rounded() * twoPi
        if reduced > .pi { reduced -= twoPi }
        var term = reduced
        var sum = reduced
        for n in 1..<12 {
            term *= -reduced * reduced / Double((2 * n) * (2 * n + 1))
            sum += term
        }
        return sum
    }
}
