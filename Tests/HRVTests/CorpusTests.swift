import Foundation
import Testing

@testable import HRV

/// The corrector against the corpus of Tests/HRVCheck/corpus (made by corpus.py there, which
/// checks that the files regenerate identically): clean hearts are left alone, artefacts are found
/// where they were put and the RMSSD comes back near the clean series'. The comparison with
/// neurokit2, beat by beat, is hrv_check.py's (HRVCommandIndependentTests).
@Suite struct CorpusTests {
    /// One series: the RR intervals as a strap would send them, the clean ones, and where the
    /// artefacts were injected (0-based places in `rr`).
    struct Series {
        let name: String
        let rr: [Double]
        let clean: [Double]
        let injected: [Int]
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("HRVCheck/corpus")

    static let cleanNames = ["resting", "athlete", "sitter", "slow-breathing", "athlete-40", "exercise"]
    static let corruptedNames = ["resting-10-events", "ectopic-3pc", "loose-strap", "contact-drop"]

    static func load(_ name: String) throws -> Series {
        func lines(_ suffix: String) throws -> [Substring] {
            let text = try String(
                contentsOf: directory.appendingPathComponent("\(name).\(suffix)"), encoding: .utf8)
            return text.split(separator: "\n")
        }
        func values(_ lines: [Substring]) -> [Double] {
            lines.filter { !$0.hasPrefix("#") }.compactMap { Double($0) }
        }
        let truth = try lines("truth")
        let injected = truth.filter { $0.hasPrefix("# artefact ") }.compactMap {
            $0.split(separator: " ").last
        }
        .compactMap { Int($0) }
        return Series(name: name, rr: values(try lines("rr")), clean: values(truth), injected: injected)
    }

    static func rmssd(_ beats: [NNInterval]) -> Double {
        HRV.metrics(of: beats, alpha1: false).rmssd ?? .nan
    }

    @Test(arguments: cleanNames)
    func cleanSeriesAreLeftAlone(name: String) throws {
        let series = try Self.load(name)
        #expect(series.rr.count == 600 && series.rr == series.clean && series.injected.isEmpty)
        let (beats, artefacts) = HRV.correctExplained(rr: series.rr)
        // The issue's bound is 1 % of the beats and 1 % of RMSSD; the corrector does better on
        // every one of them today: nothing flagged.
        #expect(artefacts.count <= series.rr.count / 100)
        #expect(artefacts.isEmpty, "\(artefacts)")
        let truth = Self.rmssd(series.clean.map { NNInterval(milliseconds: $0) })
        #expect(abs(Self.rmssd(beats) - truth) <= truth * 0.01)
    }

    /// A real recording (pyhrv's sample NN series, Tests/HRVCheck/real, BSD-3-Clause): hrm changes
    /// only its one plainly long beat (758, 1070, 844 ms), which neurokit2's Kubios flags too
    /// (hrv_check.py compares the two); the shape of an ectopic pair is nowhere strong enough.
    @Test func realRecordingIsLeftAloneButForItsLongBeat() throws {
        let text = try String(
            contentsOf: Self.directory.deletingLastPathComponent().appendingPathComponent(
                "real/pyhrv-short.rr"),
            encoding: .utf8)
        let rr = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { Double($0) }
        #expect(rr.count == 337)
        let (beats, artefacts) = HRV.correctExplained(rr: rr)
        #expect(artefacts == [Artefact(index: 118, beat: 118, kind: .long)])
        #expect(EctopicPairs.starts(in: rr).isEmpty)
        #expect(beats.count == rr.count)
    }

    @Test(arguments: corruptedNames)
    func artefactsAreFoundAndUndone(name: String) throws {
        let series = try Self.load(name)
        #expect(!series.injected.isEmpty)
        let (beats, artefacts) = HRV.correctExplained(rr: series.rr)
        let flagged = Set(artefacts.map(\.index))
        // Every RR flagged lies within one beat of an injected artefact (no clean beat touched).
        let stray = flagged.filter { index in !series.injected.contains { abs($0 - index) <= 1 } }
        #expect(stray.isEmpty, "\(stray.sorted())")
        let truth = Self.rmssd(series.clean.map { NNInterval(milliseconds: $0) })
        let error = abs(Self.rmssd(beats) - truth) / truth
        let missed = series.injected.filter { index in !flagged.contains { abs($0 - index) <= 1 } }
        #expect(missed.isEmpty, "\(missed)")
        #expect(error <= 0.03, "RMSSD \(Self.rmssd(beats)) against \(truth)")
    }
}
