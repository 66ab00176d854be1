import Testing

@testable import HRV

/// Artefact correction: clean data untouched, injected artefacts found where they were put and
/// undone, the live stream identical to the offline analysis, memory bounded.
@Suite struct ArtefactCorrectorTests {
    /// Resting-like RR: ±50 ms of sinus arrhythmia at 0.25 Hz around 800 ms and 10 ms of noise.
    static let clean = sinusArrhythmia(count: 300, mean: 800, amplitude: 50, noise: 10, seed: 4)

    static func values(_ beats: [NNInterval]) -> [Double] { beats.map(\.milliseconds) }
    static func flagged(_ beats: [NNInterval]) -> [Int] {
        beats.indices.filter { beats[$0].artefacts > 0 }
    }

    /// Every beat outside `changed` comes through exactly as in `clean`.
    static func expectUntouched(
        _ beats: [NNInterval], except changed: Set<Int>, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(beats.count == clean.count, sourceLocation: sourceLocation)
        let differing = beats.indices.filter {
            !changed.contains($0) && $0 < clean.count && beats[$0].milliseconds != clean[$0]
        }
        #expect(differing == [], sourceLocation: sourceLocation)
    }

    @Test func cleanRestingDataIsUntouched() {
        let beats = HRV.correct(rr: Self.clean)
        #expect(Self.values(beats) == Self.clean)
        #expect(Self.flagged(beats).isEmpty)
        #expect(beats.dropFirst().allSatisfy { $0.differenceUsable })
        #expect(beats.first?.differenceUsable == false)
    }

    /// Strong respiratory sinus arrhythmia, ±150 ms at 0.25 Hz around 900 ms: with and without a
    /// little noise, the phase following the beats' times or their count.
    @Test(arguments: [0.0, 3, 5])
    func strongSinusArrhythmiaIsUntouched(noise: Double) {
        let timed = sinusArrhythmia(count: 2000, mean: 900, amplitude: 150, hertz: 0.25, noise: noise)
        var random = SplitMix64(seed: 8)
        let counted = (0..<2000).map { k in
            900 + 150 * sine(2 * Double.pi * 0.25 * 0.9 * Double(k)) + noise * random.gaussian()
        }
        for series in [timed, counted] {
            let beats = HRV.correct(rr: series)
            #expect(Self.values(beats) == series)
            #expect(Self.flagged(beats).isEmpty)
        }
    }

    @Test(arguments: [3, 30, 150, 290])
    func missedBeatIsSplitBack(at index: Int) {
        var rr = Self.clean
        rr[index] += rr.remove(at: index + 1)
        let beats = HRV.correct(rr: rr)
        Self.expectUntouched(beats, except: [index, index + 1])
        #expect(Self.flagged(beats) == [index, index + 1])
        let half = (Self.clean[index] + Self.clean[index + 1]) / 2
        #expect(abs(beats[index].milliseconds - half) < 1e-9)
        #expect(beats[index].milliseconds == beats[index + 1].milliseconds)
        #expect(beats[index].artefacts + beats[index + 1].artefacts == 2)
        #expect(beats[index...(index + 2)].allSatisfy { !$0.differenceUsable })
        #expect(beats[index + 3].differenceUsable)
    }

    @Test(arguments: [3, 30, 150, 290])
    func extraBeatIsMerged(at index: Int) {
        var rr = Self.clean
        let early = rr[index] * 0.4
        rr[index] -= early
        rr.insert(early, at: index + 1)
        let beats = HRV.correct(rr: rr)
        Self.expectUntouched(beats, except: [index])
        #expect(Self.flagged(beats) == [index])
        #expect(abs(beats[index].milliseconds - Self.clean[index]) < 1e-9)
        #expect(beats[index].artefacts == 2)
        #expect(!beats[index].differenceUsable && !beats[index + 1].differenceUsable)
    }

    /// A premature beat (25 % early) and its compensatory pause: both become their mean.
    @Test(arguments: [3, 30, 150, 290])
    func ectopicBeatKeepsThePairsTotal(at index: Int) {
        var rr = Self.clean
        let early = rr[index] * 0.25
        rr[index] -= early
        rr[index + 1] += early
        let beats = HRV.correct(rr: rr)
        Self.expectUntouched(beats, except: [index, index + 1])
        #expect(Self.flagged(beats) == [index, index + 1])
        let mean = (Self.clean[index] + Self.clean[index + 1]) / 2
        #expect(abs(beats[index].milliseconds - mean) < 1e-9)
        #expect(abs(beats[index + 1].milliseconds - mean) < 1e-9)
        #expect(beats[index].artefacts == 1 && beats[index + 1].artefacts == 1)
    }

    @Test func severalArtefactsAreEachFoundAndCounted() {
        var rr = Self.clean
        // Ectopic at 200, extra at 120, missed at 50 (from the back, so indices hold).
        rr[200] -= 200
        rr[201] += 200
        rr.insert(300, at: 121)
        rr[120] -= 300
        rr[50] += rr.remove(at: 51)
        var corrector = ArtefactCorrector()
        var beats: [NNInterval] = []
        for value in rr { beats += corrector.append(value) }
        beats += corrector.endRun()
        #expect(Self.flagged(beats) == [50, 51, 120, 200, 201])
        #expect(corrector.artefacts == 6)
        #expect(HRV.metrics(of: beats).artefacts == 6)
        let corrected = HRV.metrics(of: beats)
        let truth = HRV.metrics(of: Self.clean.map { NNInterval(milliseconds: $0) })
        #expect(corrected.beats == truth.beats)
        #expect(abs(corrected.seconds - truth.seconds) < 1e-9)
    }

    /// `explained` names each RR changed, by its place in the input (unmeasurable ones counted),
    /// and the NN interval it went into.
    @Test func explainedListsEachChange() {
        var rr = Self.clean
        rr[200] -= 200
        rr[201] += 200
        rr.insert(300, at: 121)
        rr[120] -= 300
        rr[50] += rr.remove(at: 51)
        rr.insert(.nan, at: 80)
        rr.append(.nan)
        var corrector = ArtefactCorrector(explaining: true)
        var beats: [NNInterval] = []
        for value in rr { beats += corrector.append(value) }
        beats += corrector.endRun()
        let explained = corrector.explained
        #expect(explained.map(\.index) == [50, 80, 120, 121, 201, 202, rr.count - 1])
        #expect(explained.map(\.kind) == [.missed, .removed, .extra, .extra, .ectopic, .ectopic, .removed])
        // RR 50 became NN intervals 50 and 51; the NaN at 80 counts on the NN interval after it (81,
        // RR 81); RRs 120-121 merged into NN 120; the pair 201-202 is NN 200 and 201; the NaN at
        // the end, on none (the next run's first).
        #expect(explained.map(\.beat) == [50, 81, 120, 120, 200, 201, beats.count])
        #expect(ArtefactCorrector(explaining: false).explained.isEmpty)
        var silent = ArtefactCorrector()
        for value in rr { _ = silent.append(value) }
        _ = silent.endRun()
        #expect(silent.explained.isEmpty && silent.artefacts == corrector.artefacts)
    }

    @Test func withoutCorrectionEverythingPassesThrough() {
        let rr = [800, 1600, 400, 400, .nan, -5, 0, 800] + Self.clean
        var corrector = ArtefactCorrector(correcting: false)
        var beats: [NNInterval] = []
        for value in rr { beats += corrector.append(value) }
        #expect(corrector.provisional.isEmpty)
        beats += corrector.endRun()
        #expect(beats.map(\.milliseconds.bitPattern) == rr.map(\.bitPattern))
        #expect(beats.allSatisfy { $0.artefacts == 0 })
        #expect(corrector.artefacts == 0)
        #expect(
            beats.first?.differenceUsable == false && beats.dropFirst().allSatisfy { $0.differenceUsable })
    }

    @Test func unmeasurableRRsAreRemovedAndCounted() {
        var rr = Self.clean
        rr.insert(.nan, at: 100)
        rr.insert(0, at: 150)
        rr.insert(-20, at: 150)
        rr.insert(.infinity, at: 200)
        rr.append(.nan)
        var corrector = ArtefactCorrector()
        var beats: [NNInterval] = []
        for value in rr { beats += corrector.append(value) }
        beats += corrector.endRun()
        #expect(Self.values(beats) == Self.clean)
        // Each removal counts on the beat after it, which loses its difference only.
        #expect(Self.flagged(beats) == [100, 149, 197])
        #expect(beats[149].artefacts == 2)
        #expect(!beats[100].differenceUsable && beats[101].differenceUsable)
        // The NaN at the very end counts, on no beat.
        #expect(corrector.artefacts == 5)
    }

    @Test func hostileValuesDoNotTrap() {
        let rr: [Double] =
            [1e300, 800, .greatestFiniteMagnitude, 1e-300, 800, -.infinity] + Self.clean
            + [1e300, 1e-300, 800, 1e308, 1e308]
        let beats = HRV.correct(rr: rr)
        #expect(beats.allSatisfy { $0.milliseconds > 0 })
        _ = HRV.metrics(of: beats)
        _ = HRV.correct(rr: Array(repeating: 800, count: 500))
        let huge = (0..<200).map {
            $0.isMultiple(of: 3) ? Double.greatestFiniteMagnitude : 800 + Double($0 % 7)
        }
        #expect(EctopicPairs.starts(in: huge).allSatisfy { huge.indices.contains($0) })
        #expect(HRV.correct(rr: huge).allSatisfy { $0.milliseconds > 0 })
    }

    /// The same RR stream fed beat by beat (what `hrm watch` does), with the held-back beats taken
    /// as provisional at the end, gives exactly what the live corrector gives over the whole run.
    @Test(arguments: 1...4 as ClosedRange<UInt64>)
    func liveEqualsOffline(seed: UInt64) {
        let rr = Self.dirtySeries(count: 1500, seed: seed)
        var corrector = ArtefactCorrector()
        var decided: [NNInterval] = []
        var lag = 0
        for value in rr {
            decided += corrector.append(value)
            let provisional = corrector.provisional
            #expect(corrector.provisional == provisional)  // Asking changes nothing.
            lag = max(lag, provisional.count)
        }
        #expect(decided + corrector.provisional == HRV.correctLive(rr: rr))
        #expect(lag <= ArtefactCorrector.warmUpBeats + 2)
    }

    /// Past the warm-up, the live output lags the input by three beats: a beat is decided once the
    /// two RRs after it are in, then held one decision for a following ectopic partner. (A missed
    /// beat held back is two NN intervals, so four may be held; an extra beat merged, two.)
    @Test func liveOutputLagsThreeBeats() {
        let rr = Self.dirtySeries(count: 1500, seed: 9)
        var corrector = ArtefactCorrector()
        var handedOut = 0
        var lags: [Int] = []
        for (index, value) in rr.enumerated() {
            handedOut += corrector.append(value).count
            if index >= ArtefactCorrector.warmUpBeats + 2 { lags.append(corrector.provisional.count) }
        }
        #expect(lags.filter { $0 == 3 }.count > lags.count * 9 / 10)
        #expect(lags.allSatisfy { (2...4).contains($0) })
        #expect(handedOut + corrector.provisional.count == HRV.correctLive(rr: rr).count)
    }

    /// A run ends (a dropped link): what follows is corrected as a run of its own.
    @Test func runsAreIndependent() {
        let first = Self.dirtySeries(count: 400, seed: 5)
        let second = Self.dirtySeries(count: 300, seed: 6)
        var corrector = ArtefactCorrector()
        var beats: [NNInterval] = []
        for value in first { beats += corrector.append(value) }
        beats += corrector.endRun()
        for value in second { beats += corrector.append(value) }
        beats += corrector.endRun()
        let expected = HRV.correctLive(rr: first) + HRV.correctLive(rr: second)
        #expect(beats == expected)
        #expect(!beats[HRV.correctLive(rr: first).count].differenceUsable)
    }

    /// Mild ectopic beats (20 % premature, fully compensated) amid strong sinus arrhythmia (±120 ms
    /// at 55 bpm, 5 s breaths): their jumps are no larger than the arrhythmia's own, but a whole
    /// run's corrector finds each by its shape (`EctopicPairs`) and touches nothing else.
    @Test func wholeRunFindsMildEctopicBeatsAmidStrongArrhythmia() {
        let clean = sinusArrhythmia(count: 600, mean: 1090, amplitude: 120, hertz: 0.2, noise: 8, seed: 12)
        var rr = clean
        let places = [60, 137, 201, 288, 350, 431, 502, 560]
        for place in places {
            let early = rr[place] * 0.2
            rr[place] -= early
            rr[place + 1] += early
        }
        #expect(EctopicPairs.starts(in: rr) == places)
        let (beats, artefacts) = HRV.correctExplained(rr: rr)
        #expect(Set(artefacts.map(\.index)) == Set(places.flatMap { [$0, $0 + 1] }))
        #expect(artefacts.allSatisfy { $0.kind == .ectopic })
        let truth = HRV.metrics(of: clean.map { NNInterval(milliseconds: $0) }, alpha1: false).rmssd ?? 0
        let corrected = HRV.metrics(of: beats, alpha1: false).rmssd ?? .infinity
        #expect(abs(corrected - truth) <= truth * 0.01, "RMSSD \(corrected) against \(truth)")
        // Clean, the same heart has no pair; a missed beat is none either, and an extra one is
        // merged as such (the pair seen in the short RR's wake never comes up: the merge takes it).
        #expect(EctopicPairs.starts(in: clean).isEmpty)
        var missed = clean
        missed[300] += missed.remove(at: 301)
        #expect(EctopicPairs.starts(in: missed).isEmpty)
        #expect(
            HRV.correctExplained(rr: missed).artefacts == [Artefact(index: 300, beat: 300, kind: .missed)])
        var extra = clean
        extra.insert(extra[300] * 0.4, at: 301)
        extra[300] *= 0.6
        #expect(
            HRV.correctExplained(rr: extra).artefacts == [
                Artefact(index: 300, beat: 300, kind: .extra), Artefact(index: 301, beat: 300, kind: .extra),
            ])
    }

    /// A whole run and the live corrector agree where there is nothing for the pairs to find.
    @Test func wholeAndLiveAgreeOnCleanData() {
        #expect(HRV.correct(rr: Self.clean) == HRV.correctLive(rr: Self.clean))
        let strong = sinusArrhythmia(count: 2000, mean: 900, amplitude: 150, hertz: 0.25, noise: 3)
        #expect(HRV.correct(rr: strong) == HRV.correctLive(rr: strong))
    }

    @Test func shortRunsPassThroughUntouched() {
        let rr = [800.0, 1600, 800, 400, 400, 800]
        #expect(Self.values(HRV.correct(rr: rr)) == rr)
        #expect(Self.values(HRV.correctLive(rr: rr)) == rr)
    }

    @Test func memoryStaysBounded() async {
        let checks = await offThePool {
            var checks: [(String, Bool)] = []
            let rr = Self.dirtySeries(count: 30_000, seed: 7)
            var corrector = ArtefactCorrector()
            var decided: [NNInterval] = []
            var early = 0
            for (index, value) in rr.enumerated() {
                decided.removeAll(keepingCapacity: true)
                corrector.append(value, into: &decided)
                if index == 1000 { early = corrector.storageCapacity }
            }
            checks.append(("early > 0", early > 0))
            checks.append(("corrector.storageCapacity == early", corrector.storageCapacity == early))
            checks.append(("corrector.storageCapacity < 1000", corrector.storageCapacity < 1000))
            return checks
        }
        for (what, ok) in checks { #expect(ok, "\(what)") }
    }

    /// The paper's decision rule on textbook patterns (values already divided by the thresholds).
    @Test func verdicts() {
        func verdict(
            _ d: Double, _ before: Double?, _ after: Double?, _ afterNext: Double?, m: Double = 0,
            second: Bool = false
        ) -> BeatVerdict {
            BeatNeighbourhood(
                difference: d, differenceBefore: before, differenceAfter: after,
                differenceAfterNext: afterNext,
                medianDeviation: m, aboveMedian: m > 0, secondCandidate: second
            ).verdict
        }
        #expect(verdict(0.5, 0, -0.5, 0) == .normal)
        // The long middle of a short-long-normal pattern: both neighbours fall (equation 1).
        #expect(verdict(4, -2, -2, 0) == .ectopic)
        // A missed beat: a rise, then a fall (equation 3).
        #expect(verdict(8, 0, -8, 0, m: 2) == .long)
        // An extra detection: a fall, then a rise (equation 5).
        #expect(verdict(-6, 0, 1, 5, m: -2) == .short)
        // A large deviation from the median alone: looked at only in the paper's second
        // candidate (the beat after a large difference), as in its Figure 1.
        #expect(verdict(0.2, 0, 0, 0, m: 4) == .normal)
        #expect(verdict(0.2, 0, 0, 0, m: 4, second: true) == .long)
        #expect(verdict(0.2, 0, 0, 0, m: -4, second: true) == .short)
    }

    /// The evidence a verdict needs on top of the paper's rule (what keeps clean hearts clean).
    @Test func confirmations() {
        func confirmed(
            _ verdict: BeatVerdict, d: Double, m: Double, before: Double? = nil, after: Double? = nil
        ) -> BeatVerdict {
            BeatNeighbourhood(
                difference: d, differenceBefore: before, differenceAfter: after, differenceAfterNext: nil,
                medianDeviation: m, aboveMedian: m > 0
            ).confirmed(verdict)
        }
        // Three large differences in alternation: one beat out of place.
        #expect(confirmed(.ectopic, d: 1.6, m: 0.5, before: -1.1, after: -1.2) == .ectopic)
        #expect(confirmed(.ectopic, d: 1.6, m: 0.5, before: -0.9, after: -1.2) == .normal)
        #expect(confirmed(.ectopic, d: 1.4, m: 0.5, before: -1.1, after: -1.2) == .normal)
        #expect(confirmed(.ectopic, d: -1.6, m: -0.5, before: 1.1, after: 1.2) == .ectopic)
        #expect(confirmed(.long, d: 1.6, m: 0.5, before: -1.1, after: -1.2) == .normal)
        #expect(confirmed(.ectopic, d: 1.5, m: 1) == .normal)
        #expect(confirmed(.ectopic, d: 2.1, m: 1) == .ectopic)
        #expect(confirmed(.ectopic, d: -1.5, m: -2.6) == .ectopic)
        #expect(confirmed(.long, d: 2.1, m: 1) == .normal)
        #expect(confirmed(.long, d: 2.6, m: 1) == .long)
        #expect(confirmed(.short, d: -1.2, m: -2.6) == .short)
        #expect(confirmed(.normal, d: 9, m: 9) == .normal)
    }

    /// `clean`-like RR with an artefact of each kind every 40-ish beats and the odd unmeasurable
    /// value.
    static func dirtySeries(count: Int, seed: UInt64) -> [Double] {
        var random = SplitMix64(seed: seed)
        var rr = sinusArrhythmia(count: count, mean: 800, amplitude: 50, noise: 10, seed: seed)
        var index = 25
        while index < rr.count - 3 {
            switch random.next() % 5 {
            case 0: rr[index] += rr.remove(at: index + 1)
            case 1:
                let early = rr[index] * 0.45
                rr[index] -= early
                rr.insert(early, at: index + 1)
            case 2:
                rr[index] -= 180
                rr[index + 1] += 180
            case 3: rr[index] *= 1.4
            default: rr.insert(.nan, at: index)
            }
            index += 20 + Int(random.next() % 40)
        }
        return rr
    }
}
