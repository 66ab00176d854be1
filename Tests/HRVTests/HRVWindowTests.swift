import Testing

@testable import HRV

/// The live window: its running sums against the formulas from scratch, its length, its memory.
@Suite struct HRVWindowTests {
    /// Random NN intervals with the odd unusable difference and corrected beat.
    static func beats(count: Int, seed: UInt64) -> [NNInterval] {
        var random = SplitMix64(seed: seed)
        let values = sinusArrhythmia(
            count: count, mean: 850, amplitude: 80, hertz: 0.22, noise: 25, seed: seed)
        return values.map { value in
            let corrected = random.next() % 25 == 0
            return NNInterval(
                milliseconds: value, artefacts: corrected ? 1 : 0,
                differenceUsable: !corrected && random.next() % 30 != 0)
        }
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): abs(a - b) <= 1e-9 * max(1, abs(b))
        default: false
        }
    }

    static func same(_ a: HRVMetrics, _ b: HRVMetrics) -> Bool {
        a.beats == b.beats && a.artefacts == b.artefacts && close(a.seconds, b.seconds)
            && close(a.meanNN, b.meanNN)
            && close(a.sdnn, b.sdnn) && close(a.rmssd, b.rmssd) && close(a.pnn50, b.pnn50)
            && close(a.meanHR, b.meanHR) && close(a.alpha1, b.alpha1)
    }

    @Test(arguments: [30.0, 60, 300])
    func runningSumsMatchTheFormulasAtEveryStep(seconds: Double) async {
        let checks = await offThePool {
            var checks: [(String, Bool)] = []
            let all = Self.beats(count: 4_000, seed: UInt64(seconds))
            var window = HRVWindow(seconds: seconds)
            var mismatches = 0
            var tooLong = 0
            var notLongest = 0
            for (index, beat) in all.enumerated() {
                window.append(beat)
                let held = Array(window.beats)
                // The window is the longest run of the latest beats within `seconds`.
                let total = held.reduce(0) { $0 + $1.milliseconds }
                if total > seconds * 1000 + 1e-6 { tooLong += 1 }
                if held.count <= index, total + all[index - held.count].milliseconds <= seconds * 1000 - 1e-6
                {
                    notLongest += 1
                }
                if held != Array(all[(index + 1 - held.count)...index]) { notLongest += 1 }
                let alpha1 = index % 97 == 0
                if !Self.same(window.metrics(alpha1: alpha1), HRV.metrics(of: held, alpha1: alpha1)) {
                    mismatches += 1
                }
            }
            checks.append(("mismatches == 0", mismatches == 0))
            checks.append(("tooLong == 0", tooLong == 0))
            checks.append(("notLongest == 0", notLongest == 0))
            return checks
        }
        for (what, ok) in checks { #expect(ok, "\(what)") }
    }

    @Test func unboundedWindowKeepsTheWholeSession() {
        let all = Self.beats(count: 5000, seed: 3)
        var window = HRVWindow(seconds: nil)
        window.append(contentsOf: all)
        #expect(window.count == all.count)
        #expect(Self.same(window.metrics(), HRV.metrics(of: all)))
    }

    /// Provisional beats count as if appended, evictions included, and are not kept.
    @Test func provisionalBeatsAreAddedWithoutBeingKept() {
        let all = Self.beats(count: 3000, seed: 4)
        var random = SplitMix64(seed: 5)
        var window = HRVWindow(seconds: 60)
        for (index, beat) in all.enumerated() {
            window.append(beat)
            guard index % 7 == 0 else { continue }
            var provisional = Array(all[index..<min(index + Int(random.next() % 5), all.count)])
            if random.next() % 50 == 0 { provisional.append(NNInterval(milliseconds: 61_000)) }
            if random.next() % 50 == 0 { provisional.insert(NNInterval(milliseconds: .nan), at: 0) }
            var appended = window
            appended.append(contentsOf: provisional)
            let count = window.count
            #expect(Self.same(window.metrics(adding: provisional), HRV.metrics(of: Array(appended.beats))))
            #expect(window.count == count)
        }
    }

    @Test func unmeasurableBeatsAreIgnored() {
        var window = HRVWindow(seconds: 10)
        for value in [800.0, .nan, -1, 0, .infinity, 900] { window.append(NNInterval(milliseconds: value)) }
        #expect(window.count == 2)
        #expect(window.metrics().rmssd == 100)
    }

    @Test func aBeatLongerThanTheWindowEmptiesIt() {
        var window = HRVWindow(seconds: 2)
        window.append(contentsOf: [800, 900].map { NNInterval(milliseconds: $0) })
        window.append(NNInterval(milliseconds: 2500))
        #expect(window.count == 0)
        #expect(window.metrics() == HRVMetrics())
        window.append(NNInterval(milliseconds: 700))
        #expect(window.count == 1)
        #expect(window.metrics().meanNN == 700)
        for seconds in [0, -5, Double.nan] {
            var odd = HRVWindow(seconds: seconds)
            odd.append(NNInterval(milliseconds: 800))
            #expect(odd.count == 0)
        }
    }

    @Test func removeAllStartsOver() {
        var window = HRVWindow(seconds: 60)
        window.append(contentsOf: Self.beats(count: 200, seed: 6))
        window.removeAll()
        #expect(window.count == 0)
        window.append(NNInterval(milliseconds: 1000))
        #expect(window.metrics() == HRVMetrics(beats: 1, seconds: 1, meanNN: 1000, meanHR: 60))
    }

    @Test func memoryStaysBounded() async {
        let checks = await offThePool {
            var checks: [(String, Bool)] = []
            var window = HRVWindow(seconds: 120)
            let all = Self.beats(count: 30_000, seed: 7)
            var early = 0
            for (index, beat) in all.enumerated() {
                window.append(beat)
                if index == 5_000 { early = window.storageCapacity }
            }
            checks.append(("window.storageCapacity == early", window.storageCapacity == early))
            checks.append(
                ("window.storageCapacity <= 4 * window.count", window.storageCapacity <= 4 * window.count))
            // Still exact after 30 000 beats of additions and removals.
            checks.append(
                (
                    "Self.same(window.metrics(), HRV.metrics(of: Array(window.beats)))",
                    Self.same(window.metrics(), HRV.metrics(of: Array(window.beats)))
                ))
            return checks
        }
        for (what, ok) in checks { #expect(ok, "\(what)") }
    }

    /// The corrector feeding a window beat by beat, as `hrm watch` does: the live corrector's
    /// figures over the whole run.
    @Test func correctorIntoWindowMatchesTheOfflineAnalysis() {
        let rr = ArtefactCorrectorTests.dirtySeries(count: 2000, seed: 9)
        var corrector = ArtefactCorrector()
        var window = HRVWindow(seconds: nil)
        for value in rr { window.append(contentsOf: corrector.append(value)) }
        #expect(
            Self.same(window.metrics(adding: corrector.provisional), HRV.metrics(of: HRV.correctLive(rr: rr)))
        )
    }
}
