public import Foundation

/// An independent checker of hrm's output: a Python script run in a venv of its own under
/// `.build` (made by Tests/prepare-venv.sh, as `make test-deps` and `.ci/run` make it, or by the
/// first test that needs it). Shared by the test targets of the pure libraries (FIT, ECG, EDF).
/// No Testing import, so that `make release`, which builds every target, builds it too.
public struct IndependentChecker: Sendable {
    /// What a run printed (stdout and stderr together) and how it ended.
    public struct Result: Sendable {
        /// The exit status.
        public let status: Int32
        /// stdout and stderr, interleaved as written.
        public let output: String
    }

    /// The repository's root.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's name: `.build/NAME-venv`.
    public let venv: String
    /// How long pip may take, in seconds.
    public let timeout: Int
    /// The modules that must import for the venv to count as ready.
    public let modules: [String]
    /// What pip installs.
    public let packages: [String]
    /// The checker script, from the repository's root (`Tests/FITCheck/fit_check.py`).
    public let script: String

    /// A checker `script` run in the venv `venv` of `packages` (`modules` must import).
    public init(venv: String, timeout: Int = 600, modules: [String], packages: [String], script: String) {
        self.venv = venv
        self.timeout = timeout
        self.modules = modules
        self.packages = packages
        self.script = script
    }

    /// The venv's interpreter.
    public var python: URL { Self.root.appendingPathComponent(".build/\(venv)-venv/bin/python") }

    /// nil when the venv is ready (made now if missing), else why not, for a SKIPPED line.
    public func prepare() async -> String? {
        let what = "the venv .build/\(venv)-venv (\(packages.joined(separator: ", ")))"
        do {
            let result = try await Self.run(
                Self.root.appendingPathComponent("Tests/prepare-venv.sh").path,
                [venv, String(timeout), modules.joined(separator: " ")] + packages)
            guard result.status == 0 else {
                let tail = result.output.split(separator: "\n").suffix(3).joined(separator: " | ")
                return "\(what) could not be made (status \(result.status)): \(tail)"
            }
            return nil
        } catch {
            return "\(what) could not be made: \(error)"
        }
    }

    /// Runs the script with `arguments` in the venv.
    public func check(_ arguments: [String]) async throws -> Result {
        try await Self.run(python.path, [Self.root.appendingPathComponent(script).path] + arguments)
    }

    /// Runs `executable ARGUMENTS`; stdout and stderr together, through a file so nothing blocks.
    public static func run(_ executable: String, _ arguments: [String]) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "checker-run-\(UUID().uuidString)")
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
}
