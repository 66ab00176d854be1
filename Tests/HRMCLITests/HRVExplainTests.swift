import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm hrv --explain`: which RR intervals the correction changed, by kind, exactly as printed;
/// without it, every line as before.
@Suite struct HRVExplainTests {
    /// `HRVCommandBinaryTests.series(120)` with a missed beat at 40 (two RRs as one), an extra
    /// detection splitting RR 70 (then 70 and 71) and an ectopic pair at 100 and 101.
    static func corrupted() -> String {
        var rr = HRVCommandBinaryTests.series(120)
        rr[40] += rr.remove(at: 41)
        let early = rr[70] * 0.4
        rr[70] -= early
        rr.insert(early, at: 71)
        rr[100] -= 200
        rr[101] += 200
        return HRVCommandBinaryTests.numbers(rr)
    }

    static let metrics =
        #"{"type":"hrv","beats":120,"artefacts":6,"mean_nn_ms":905.75,"sdnn_ms":26.79,"rmssd_ms":45.87,"pnn50":20.72,"mean_hr":66.24,"alpha1":0.28"#

    @Test func jsonLineEndsWithTheArtefactsByKind() async throws {
        let files = try HRVCommandBinaryTests.Files()
        let path = try files.write("rr.txt", Self.corrupted())
        let explained = try await HRMProcess.run(["hrv", "--json", "--explain", path])
        #expect(explained.status == 0)
        #expect(
            explained.stdoutLines == [
                Self.metrics
                    + #","artefacts_at":{"missed":[40],"extra":[70,71],"ectopic":[100,101],"long":[],"short":[]}}"#
            ])
        let plain = try await HRMProcess.run(["hrv", "--json", path])
        #expect(plain.stdoutLines == [Self.metrics + "}"])
    }

    @Test func textLineUnderTheResult() async throws {
        let files = try HRVCommandBinaryTests.Files()
        let path = try files.write("rr.txt", Self.corrupted())
        let result = try await HRMProcess.run(["hrv", "--explain", path])
        #expect(result.status == 0)
        #expect(
            result.stdoutLines == [
                "120 RR intervals, 1:48.69 of beats, artefact correction on",
                "0:00-1:48.69  RMSSD 45.9 ms  SDNN 26.8 ms  pNN50 20.7 %  mean HR 66.2 bpm  alpha1 0.28  (120 beats, 6 artefacts corrected)",
                "  artefacts at RR: missed 40; extra 70 71; ectopic 100 101",
            ])
    }

    /// Per window, the artefacts among the window's beats; numbers still count from the input's start.
    @Test func perWindow() async throws {
        let files = try HRVCommandBinaryTests.Files()
        let path = try files.write("rr.txt", Self.corrupted())
        let result = try await HRMProcess.run(["hrv", "--json", "--explain", "--window", "40s", path])
        #expect(result.status == 0)
        #expect(
            result.stdoutLines == [
                #"{"type":"hrv","start":0,"end":40,"beats":44,"artefacts":2,"mean_nn_ms":906.07,"sdnn_ms":27.02,"rmssd_ms":46.56,"pnn50":22.5,"mean_hr":66.22,"alpha1":null,"artefacts_at":{"missed":[40],"extra":[],"ectopic":[],"long":[],"short":[]}}"#,
                #"{"type":"hrv","start":40,"end":80,"beats":44,"artefacts":2,"mean_nn_ms":905.89,"sdnn_ms":27.06,"rmssd_ms":45.44,"pnn50":19.51,"mean_hr":66.23,"alpha1":null,"artefacts_at":{"missed":[],"extra":[70,71],"ectopic":[],"long":[],"short":[]}}"#,
            ])
    }

    /// Clean input, and input taken as it is: the lists are empty.
    @Test func nothingChanged() async throws {
        let files = try HRVCommandBinaryTests.Files()
        let clean = try files.write(
            "clean.txt", HRVCommandBinaryTests.numbers(HRVCommandBinaryTests.series(120)))
        let result = try await HRMProcess.run(["hrv", "--explain", clean])
        #expect(result.stdoutLines.last == "  no artefacts")
        let raw = try await HRMProcess.run(
            ["hrv", "--json", "--explain", "--no-correction", try files.write("rr.txt", Self.corrupted())])
        #expect(
            raw.stdoutLines.first?.hasSuffix(
                #","artefacts_at":{"missed":[],"extra":[],"ectopic":[],"long":[],"short":[]}}"#) == true)
        #expect(raw.stdoutLines.first?.contains(#""artefacts":0,"#) == true)
    }
}
