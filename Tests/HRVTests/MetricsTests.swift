import HRV
import Testing

/// The Task Force formulas on cases small enough to compute by hand.
@Suite struct MetricsTests {
    /// 800, 850, 780, 900 ms, every difference usable.
    let beats = [800.0, 850, 780, 900].map { NNInterval(milliseconds: $0) }

    @Test func meanNNAndHeartRateAndSeconds() throws {
        let metrics = HRV.metrics(of: beats)
        // (800 + 850 + 780 + 900) / 4 = 3330 / 4 = 832.5 ms; 60000 / 832.5 = 72.072072... bpm.
        #expect(metrics.beats == 4)
        #expect(metrics.meanNN == 832.5)
        #expect(abs(try #require(metrics.meanHR) - 72.072_072_072_072_07) < 1e-9)
        #expect(abs(metrics.seconds - 3.33) < 1e-12)
        #expect(metrics.artefacts == 0)
    }

    @Test func sdnnIsTheSampleStandardDeviation() throws {
        // Deviations from 832.5: -32.5, 17.5, -52.5, 67.5; squares 1056.25 + 306.25 + 2756.25 +
        // 4556.25 = 8675; N - 1 = 3: sqrt(8675 / 3) = sqrt(2891.67) = 53.774219...
        let sdnn = try #require(HRV.metrics(of: beats).sdnn)
        #expect(abs(sdnn - 53.774_219_349_672_26) < 1e-9)
    }

    @Test func rmssdAndPNN50() throws {
        // Differences +50, -70, +120: squares 2500 + 4900 + 14400 = 21800; sqrt(21800 / 3) =
        // 85.244746...; |d| > 50: 70 and 120 (50 is not above 50): 2 of 3 = 66.67 %.
        let metrics = HRV.metrics(of: beats)
        #expect(abs(try #require(metrics.rmssd) - 85.244_745_683_629_47) < 1e-9)
        #expect(abs(try #require(metrics.pnn50) - 200.0 / 3) < 1e-12)
    }

    @Test func unusableDifferencesAreSkipped() throws {
        var beats = beats
        beats[2].differenceUsable = false  // 780: the difference 850 -> 780 does not count.
        beats[2].artefacts = 1
        let metrics = HRV.metrics(of: beats)
        // Differences left: +50 (850) and +120 (900 after 780): sqrt((2500 + 14400) / 2) =
        // sqrt(8450) = 91.923882...; above 50: 120 only, 1 of 2 = 50 %.
        #expect(abs(try #require(metrics.rmssd) - 91.923_881_554_251_18) < 1e-9)
        #expect(metrics.pnn50 == 50)
        #expect(metrics.artefacts == 1)
        // SDNN and the mean use every beat.
        #expect(metrics.meanNN == 832.5)
        #expect(abs(try #require(metrics.sdnn) - 53.774_219_349_672_26) < 1e-9)
    }

    @Test func noUsableDifferenceGivesNoRMSSD() {
        let beats = [800.0, 900, 1000].map { NNInterval(milliseconds: $0, differenceUsable: false) }
        let metrics = HRV.metrics(of: beats)
        #expect(metrics.rmssd == nil)
        #expect(metrics.pnn50 == nil)
        #expect(metrics.sdnn == 100)  // Deviations -100, 0, 100: sqrt(20000 / 2) = 100.
    }

    @Test func emptyAndSingleBeat() {
        #expect(HRV.metrics(of: [NNInterval]()) == HRVMetrics())
        let one = HRV.metrics(of: [NNInterval(milliseconds: 1000)])
        #expect(one == HRVMetrics(beats: 1, seconds: 1, meanNN: 1000, meanHR: 60))
        #expect(HRV.analyse(rr: []) == HRVMetrics())
    }

    @Test func alpha1OnlyFromFiftyBeatsAndWhenAsked() {
        let beats = whiteNoise(count: 60, seed: 3).map { NNInterval(milliseconds: $0) }
        #expect(HRV.metrics(of: beats.prefix(49)).alpha1 == nil)
        #expect(HRV.metrics(of: beats.prefix(50)).alpha1 != nil)
        #expect(HRV.metrics(of: beats, alpha1: false).alpha1 == nil)
    }

    @Test func unmeasurableBeatsAreSkipped() {
        let beats = [800.0, .nan, 900, -1, 0, .infinity].map { NNInterval(milliseconds: $0) }
        let metrics = HRV.metrics(of: beats)
        #expect(metrics.beats == 2)
        #expect(metrics.meanNN == 850)
        #expect(metrics.rmssd == 100)
    }

    @Test func largeValuesKeepTheirPrecision() throws {
        // SDNN of 1e9 + (0, 1, 2) is 1, which a plain sum of squares would lose.
        let beats = [1e9, 1e9 + 1, 1e9 + 2].map { NNInterval(milliseconds: $0) }
        #expect(abs(try #require(HRV.metrics(of: beats).sdnn) - 1) < 1e-9)
    }

    @Test func analyseWithoutCorrectionIsTheFormulas() {
        let metrics = HRV.analyse(rr: [1000, 800], correcting: false)
        #expect(metrics.meanNN == 900)
        #expect(metrics.rmssd == 200)
        #expect(metrics.pnn50 == 100)
    }
}
