import Foundation

/// A venv under `.build` for an independent Python checker (hrv-analysis and neurokit2,
/// websockets, python-osc, prometheus_client), made by Tests/prepare-venv.sh when missing: the
/// same script `make test-deps` and `.ci/run` use, so a test finds the venv ready, or makes it.
struct PythonVenv: Sendable {
    /// `.build/NAME-venv`.
    let name: String
    /// How long pip may take, in seconds.
    let timeout: Int
    /// The modules that must import for the venv to count as ready.
    let modules: [String]
    /// What pip installs.
    let packages: [String]

    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The venv's interpreter.
    var python: URL { Self.root.appendingPathComponent(".build/\(name)-venv/bin/python") }

    /// nil when the venv is ready, else why not (for a SKIPPED line).
    func prepare() async -> String? {
        let what = "the venv .build/\(name)-venv (\(packages.joined(separator: ", ")))"
        do {
            let result = try await HRMProcess.run(
                [name, String(timeout), modules.joined(separator: " ")] + packages,
                executable: Self.root.appendingPathComponent("Tests/prepare-venv.sh"))
            guard result.status == 0 else {
                let tail = (result.stdout + result.stderr).split(separator: "\n").suffix(3).joined(
                    separator: " | ")
                return "\(what) could not be made (status \(result.status)): \(tail)"
            }
            return nil
        } catch {
            return "\(what) could not be made: \(error)"
        }
    }
}
