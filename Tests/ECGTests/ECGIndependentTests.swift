import ECG
import Foundation
import Testing

/// The detector against neurokit2 through Tests/ECGCheck/ecg_check.py, in the venv at
/// `.build/hrv-venv` that hrm hrv's check uses too (neurokit2 and hrv-analysis: `make test-deps`
/// makes it, or the first test that needs it). neurokit2 simulates ECGs and finds their peaks; the
/// detector reads the same samples here; the script compares. Without the venv (no network, no
/// python3-venv) the test says SKIPPED and why, and records a known issue: never a silent pass.
@Suite struct ECGIndependentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = root.appendingPathComponent("Tests/ECGCheck/ecg_check.py")
    static let python = root.appendingPathComponent(".build/hrv-venv/bin/python")

    struct Result {
        let status: Int32
        let output: String
    }

    /// Runs `executable ARGUMENTS`; stdout and stderr together, through a file so nothing blocks.
    static func run(_ executable: String, _ arguments: [String]) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ecg-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputURL = directory.appendingPathComponent("output")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try output.close()
        return Result(status: status, output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "")
    }

    /// nil when the venv is ready, else why not. The same packages and modules as hrm hrv's check
    /// (HRVCommandIndependentTests), so that both find one venv ready.
    static func prepareVenv() async -> String? {
        do {
            let result = try await run(
                root.appendingPathComponent("Tests/prepare-venv.sh").path,
                ["hrv", "600", "neurokit2 hrvanalysis", "neurokit2", "hrv-analysis"])
            guard result.status == 0 else {
                let tail = result.output.split(separator: "\n").suffix(3).joined(separator: " | ")
                return
                    "the venv .build/hrv-venv (neurokit2, hrv-analysis) could not be made (status \(result.status)): \(tail)"
            }
            return nil
        } catch {
            return "the venv .build/hrv-venv could not be made: \(error)"
        }
    }

    /// Six heart rates from 48 to 150 bpm, each clean and at five noise levels, two minutes each.
    @Test(.timeLimit(.minutes(15))) func detectorAgreesWithNeurokit2() async throws {
        if let reason = await Self.prepareVenv() {
            print("SKIPPED: ECG R peaks against neurokit2 because \(reason)")
            withKnownIssue("SKIPPED: \(reason)") { Issue.record("ECG check not run") }
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ecg-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let simulated = try await Self.run(Self.python.path, [Self.script.path, "simulate", directory.path])
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
        let compared = try await Self.run(Self.python.path, [Self.script.path, "compare", directory.path])
        print(compared.output)
        #expect(compared.status == 0, "\(compared.output)")
        #expect(compared.output.contains("ecg-check: PASS ("))
    }
}
