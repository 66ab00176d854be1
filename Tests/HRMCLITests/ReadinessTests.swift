import Foundation
import SessionLibrary
import Testing

@testable import HRMCLI

/// `ReadinessScore` and `ReadinessBaseline` on their own: the refusals' edges, the windows of 7
/// and 30 days, and the verdicts at the band's edges.
@Suite struct ReadinessTests {
    static let day: Int64 = 86_400_000
    static let now: Int64 = 1_795_680_000_000

    static func figures(_ ln: Double, _ resting: Double) -> ReadinessFigures {
        ReadinessFigures(
            lnRMSSD: ln, rmssd: exp(ln), restingHR: resting, beats: 60, correctedBeats: 0, seconds: 60)
    }

    /// `count` beats around 1000 ms, alternating ±`swing`.
    static func beats(_ count: Int, swing: Double = 20) -> [Double] {
        (0..<count).map { 1000 + ($0 % 2 == 0 ? swing : -swing) }
    }

    @Test func cleanBeatsAreScoredByTheirDefinitions() throws {
        let outcome = ReadinessScore.score(runs: [Self.beats(60)], wanted: 60)
        guard case .scored(let figures) = outcome else {
            Issue.record("not scored: \(outcome)")
            return
        }
        #expect(figures.beats == 60)
        #expect(figures.correctedBeats == 0)
        #expect(abs(figures.rmssd - 40) < 1e-9)
        #expect(abs(figures.lnRMSSD - log(40)) < 1e-12)
        #expect(abs(figures.restingHR - 60) < 1e-9)
    }

    @Test func tooFewBeatsOrTooLittleTimeIsRefused() {
        // 39 beats: too few whatever the time.
        #expect(ReadinessScore.score(runs: [Self.beats(39)], wanted: 30).refusal == .tooFewBeats)
        // 53 s of the 60 asked for: under 90 %.
        #expect(ReadinessScore.score(runs: [Self.beats(53)], wanted: 60).refusal == .tooFewBeats)
        #expect(ReadinessScore.score(runs: [Self.beats(54)], wanted: 60).refusal == nil)
        #expect(ReadinessScore.score(runs: [], wanted: 60).refusal == .tooFewBeats)
    }

    @Test func beatsThatNeverVaryAreRefused() {
        #expect(ReadinessScore.score(runs: [Self.beats(60, swing: 0)], wanted: 60).refusal == .noVariability)
    }

    @Test func moreThanFivePercentCorrectedIsRefused() {
        // 100 beats, a missed beat (one RR of two beats' length) every 12: the corrector splits
        // each, 2 corrected RRs apiece, about 16 in all.
        var rr = Self.beats(100, swing: 15)
        for index in stride(from: 25, to: 100, by: 12) { rr[index] *= 2 }
        let outcome = ReadinessScore.score(runs: [rr], wanted: 60)
        #expect(outcome.refusal == .artefacts, "\(outcome)")
        #expect(outcome.correctedBeats > 5)
        // One missed beat in 100: 2 %, scored.
        var one = Self.beats(100, swing: 15)
        one[50] *= 2
        let scored = ReadinessScore.score(runs: [one], wanted: 60)
        #expect(scored.refusal == nil, "\(scored)")
        #expect(scored.correctedBeats == 2)
    }

    @Test func theBaselineIsBuiltFromThreeReadingsOfTheLastSevenDays() {
        let two = [1, 2].map {
            ReadinessBaseline.Prior(start: Self.now - Int64($0) * Self.day, figures: Self.figures(4, 60))
        }
        let building = ReadinessBaseline(two, at: Self.now)
        #expect(!building.isBuilt)
        #expect(building.readings7Days == 2)
        // An eighth day's reading and a later one (a clock set back) do not make it three.
        let others = [
            ReadinessBaseline.Prior(start: Self.now - 7 * Self.day - 1, figures: Self.figures(4, 60)),
            ReadinessBaseline.Prior(start: Self.now + 1, figures: Self.figures(4, 60)),
        ]
        let still = ReadinessBaseline(two + others, at: Self.now)
        #expect(!still.isBuilt)
        #expect(still.readings30Days == 3)
        let three = ReadinessBaseline(
            two + [ReadinessBaseline.Prior(start: Self.now - 7 * Self.day, figures: Self.figures(4.3, 63))],
            at: Self.now)
        #expect(three.isBuilt)
        #expect(three.readings7Days == 3)
        #expect(abs((three.lnRMSSD?.mean ?? 0) - 4.1) < 1e-12)
        #expect(abs((three.restingHR?.mean ?? 0) - 61) < 1e-12)
    }

    @Test func theBandIsTheWeeksMeanAndTheMonthsDeviation() throws {
        // Week: 4.0, 4.2, 4.4 (mean 4.2); month adds 3.6 and 4.8: SD of the five is 0.4472.
        let plan: [(Int64, Double)] = [(1, 4.0), (3, 4.2), (6, 4.4), (12, 3.6), (29, 4.8), (31, 9.9)]
        let prior = plan.map {
            ReadinessBaseline.Prior(start: Self.now - $0.0 * Self.day, figures: Self.figures($0.1, 60))
        }
        let baseline = ReadinessBaseline(prior, at: Self.now)
        let band = try #require(baseline.lnRMSSD)
        #expect(baseline.readings30Days == 5)
        #expect(abs(band.mean - 4.2) < 1e-12)
        #expect(abs(band.deviation - 0.2.squareRoot()) < 1e-12)
        #expect(band.verdict(band.low) == .within)
        #expect(band.verdict(band.high) == .within)
        #expect(band.verdict(band.low - 0.001) == .lower)
        #expect(band.verdict(band.high + 0.001) == .higher)
        #expect(ReadinessOutput.words(.lower) == "lower than usual")
        #expect(ReadinessOutput.words(.within) == "within your normal range")
    }

    @Test func theCountdownRoundsUp() {
        #expect(ReadinessProgress.clock(120) == "2:00")
        #expect(ReadinessProgress.clock(119.2) == "2:00")
        #expect(ReadinessProgress.clock(0.3) == "0:01")
        #expect(ReadinessProgress.clock(0) == "0:00")
        #expect(ReadinessOutput.elapsed(60.4) == "1:00")
    }
}
