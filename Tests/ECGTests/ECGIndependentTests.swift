import CheckerSupport
import ECG
import Foundation
import Testing

/// The detector against neurokit2 through Tests/ECGCheck/ecg_check.py, in the venv at
/// `.build/hrv-venv` that hrm hrv's check uses too (neurokit2 and hrv-analysis: `make test-deps`
/// makes it, or the first test that needs it). neurokit2 simulates ECGs and finds their peaks; the
/// detector reads the same samples here; the script compares. Without the venv (no network, no
/// python3-venv) the test says SKIPPED and why, and records a known issue: never a silent pass.
@Suite struct ECGIndependentTests {
    /// The checker and its venv (the one hrm hrv's check uses too).
    static let checker = IndependentChecker(
        venv: "hrv", modules: ["neurokit2", "hrvanalysis"], packages: ["neurokit2", "hrv-analysis"],
        script: "Tests/ECGCheck/ecg_check.py")

    /// Six heart rates from 48 to 150 bpm, each clean and at five noise levels, two minutes each.
    @Test(.timeLimit(.minutes(15))) func detectorAgreesWithNeurokit2() async throws {
        if let reason = await Self.checker.prepare() {
            print("SKIPPED: ECG R peaks against neurokit2 because \(reason)")
            withKnownIssue("SKIPPED: \(reason)") { Issue.record("ECG check not run") }
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ecg-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let simulated = try await Self.checker.check(["simulate", directory.path])
        if simulated.status == 2 {
            print("SKIPPED: ECG R peaks against neurokit2 because \(simulated.output)")
            withKnownIssue("SKIPPED: \(simulated.output)") { Issue.record("ECG check not run") }
            return
        }
        #expect(simulated.status == 0, "\(simulated.output)")
        let cases = try JSONSerialization.jsonObject(
            with: Data(contentsOf: directory.appendingPathComponent("cases.json")))
        let names = (cases as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.count == 60)
        for name in names {
            let text = try String(contentsOf: directory.appendingPathComponent("\(name).uv"), encoding: .utf8)
            var detector = RPeakDetector(sampleRate: 130)
            var peaks: [Int] = []
            for (index, line) in text.split(separator: "\n").enumerated() {
                guard let value = Double(line) else { continue }
                if let peak = detector.process(value, time: Int64(index) * 1_000_000_000 / 130) {
                    peaks.append(peak.sampleIndex)
                }
            }
            peaks += detector.finish().map(\.sampleIndex)
            try peaks.map(String.init).joined(separator: "\n").write(
                to: directory.appendingPathComponent("\(name).ours"), atomically: true, encoding: .utf8)
        }
        let compared = try await Self.checker.check(["compare", directory.path])
        print(compared.output)
        #expect(compared.status == 0, "\(compared.output)")
        #expect(compared.output.contains("ecg-check: PASS ("))
    }
}
