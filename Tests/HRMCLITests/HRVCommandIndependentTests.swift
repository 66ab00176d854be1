import Foundation
import Testing

/// `hrm hrv` against independent implementations (hrv-analysis and neurokit2 from PyPI) through
/// Tests/HRVCheck/hrv_check.py, in a venv at `.build/hrv-venv` that `.ci/run` prepares, or the
/// first of these tests when it is missing. Without it (no network, no python3-venv) the tests say
/// SKIPPED and why, and record a known issue: never a silent pass.
@Suite struct HRVCommandIndependentTests {
    static let venv = PythonVenv(
        name: "hrv", timeout: 600, modules: ["neurokit2", "hrvanalysis"],
        packages: ["neurokit2", "hrv-analysis"])
    static let script = PythonVenv.root.appendingPathComponent("Tests/HRVCheck/hrv_check.py")
    static let python = venv.python

    /// Runs the checks `only` of hrv_check.py against the built hrm; prints what it reports.
    func check(_ only: String) async throws {
        if let reason = await Self.venv.prepare() {
            print("SKIPPED: hrm hrv independent check (\(only)) because \(reason)")
            withKnownIssue("SKIPPED: \(reason)") { Issue.record("independent HRV check (\(only)) not run") }
            return
        }
        let result = try await HRMProcess.run(
            [Self.script.path, HRMProcess.binary.path, "--only", only], executable: Self.python)
        for line in result.stdout.split(separator: "\n")
        where line.hasPrefix("hrv-check:") || line.contains("SKIPPED") || line.contains("FAIL") {
            print(line)
        }
        if result.status == 2 {
            print(
                "SKIPPED: hrm hrv independent check (\(only)) because the reference libraries cannot be used")
            withKnownIssue("SKIPPED: \(result.stdout)") {
                Issue.record("independent HRV check (\(only)) not run")
            }
            return
        }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("hrv-check: PASS"))
    }

    /// Mean NN, SDNN, RMSSD, pNN50, mean HR; alpha1 once hrm computes it (the script says SKIPPED
    /// for it while hrm reports null).
    @Test(.timeLimit(.minutes(15))) func timeDomainAndDFA() async throws {
        try await check("time,dfa")
    }

    /// A missed, an extra and an ectopic beat: corrected by default, not with --no-correction.
    @Test(.timeLimit(.minutes(15))) func artefactCorrection() async throws {
        try await check("artefacts")
    }
}
