import Testing

@testable import HRV

/// The whole-session figures in O(1) memory against the same figures from every beat kept.
@Suite struct HRVAccumulatorTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func agreesWithTheWholeSeries(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let series = seed % 2 == 0 ? whiteNoise(count: 3000, seed: seed) : randomWalk(count: 3000, seed: seed)
        // Corrected beats and run starts here and there: their differences must not count.
        let beats = series.map { value in
            let corrected = random.next() % 50 == 0
            return NNInterval(
                milliseconds: value, artefacts: corrected ? 1 : 0,
                differenceUsable: !corrected && random.next() % 200 != 0)
        }
        var accumulator = HRVAccumulator()
        for (index, beat) in beats.enumerated() {
            accumulator.append(beat)
            guard [0, 1, 49, 50, 51, 333, 2999].contains(index) else { continue }
            let streamed = accumulator.metrics()
            let whole = HRV.metrics(of: beats[...index])
            #expect(streamed.beats == whole.beats)
            #expect(streamed.artefacts == whole.artefacts)
            for (a, b) in [
                (streamed.meanNN, whole.meanNN), (streamed.sdnn, whole.sdnn), (streamed.rmssd, whole.rmssd),
                (streamed.pnn50, whole.pnn50), (streamed.alpha1, whole.alpha1),
            ] {
                #expect((a == nil) == (b == nil), "at \(index)")
                if let a, let b {
                    #expect(abs(a - b) <= 1e-9 * max(abs(b), 1), "at \(index): \(a) against \(b)")
                }
            }
        }
    }

    @Test func alpha1OfLargeValuesLosesNoPrecision() throws {
        // A random walk around a billion: the profile against the first beat stays small.
        let series = randomWalk(count: 2000, mean: 1e9, step: 10, seed: 9)
        var stream = StreamingDFA()
        for value in series { stream.append(value) }
        let streamed = try #require(stream.alpha1)
        let whole = try #require(HRV.alpha1(series))
        #expect(abs(streamed - whole) < 1e-6)
    }

    @Test func provisionalBeatsAreCountedButNotKept() {
        var accumulator = HRVAccumulator()
        accumulator.append(contentsOf: (0..<10).map { NNInterval(milliseconds: 800 + Double($0 % 2) * 20) })
        let extra = [NNInterval(milliseconds: 900), NNInterval(milliseconds: 1000)]
        #expect(accumulator.metrics(adding: extra).beats == 12)
        #expect(accumulator.metrics().beats == 10)
        #expect(accumulator.count == 10)
    }

    @Test func fewerThanFiftyBeatsHaveNoAlpha1() {
        var accumulator = HRVAccumulator()
        accumulator.append(contentsOf: whiteNoise(count: 49, seed: 3).map { NNInterval(milliseconds: $0) })
        #expect(accumulator.metrics().alpha1 == nil)
        accumulator.append(NNInterval(milliseconds: 800))
        #expect(accumulator.metrics().alpha1 != nil)
    }
}
