internal import CInstallPrefix
import Foundation

/// Where hrm-sim looks for its shipped scenarios, in order:
///
/// 1. `$HRM_SIM_SCENARIOS`;
/// 2. `<bin>/../share/hrm/scenarios`, where `<bin>` is the folder of the real executable
///    (`/proc/self/exe`, not `argv[0]`, which is only `hrm-sim` when it is run from PATH);
/// 3. a `Scenarios` folder beside the executable or above it (a build inside the checkout,
///    `.build/debug/hrm-sim`);
/// 4. `<PREFIX>/share/hrm/scenarios` for the PREFIX hrm-sim was built for (`make release
///    PREFIX=...`, /usr/local by default): a binary copied out of PREFIX/bin;
/// 5. `./Scenarios` in the current folder.
public struct ScenarioFolders: Sendable, Equatable {
    /// Every folder looked at, in order, whether it exists or not (for messages).
    public let candidates: [String]

    /// The lookup for an executable at `executable` (an absolute path, symlinks resolved; nil when
    /// it cannot be known), run in `currentDirectory`, built for `installPrefix`.
    public init(
        environment: [String: String], executable: String?, currentDirectory: String, installPrefix: String
    ) {
        var result: [String] = []
        if let path = environment["HRM_SIM_SCENARIOS"], !path.isEmpty {
            result.append(path)
        }
        if let executable, executable.hasPrefix("/") {
            let binary = URL(fileURLWithPath: executable).deletingLastPathComponent()
            result.append(
                binary.deletingLastPathComponent().appendingPathComponent("share/hrm/scenarios").path)
            var directory = binary
            while directory.path != "/" && !directory.path.isEmpty {
                result.append(directory.appendingPathComponent("Scenarios").path)
                directory.deleteLastPathComponent()
            }
        }
        if installPrefix.hasPrefix("/") {
            result.append(
                URL(fileURLWithPath: installPrefix).appendingPathComponent("share/hrm/scenarios").path)
        }
        result.append(URL(fileURLWithPath: currentDirectory).appendingPathComponent("Scenarios").path)
        var seen = Set<String>()
        candidates = result.filter { seen.insert($0).inserted }
    }

    /// The folders that exist, in order.
    public var existing: [String] {
        candidates.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }
    }

    /// The lookup for this process.
    public static func current() -> ScenarioFolders {
        ScenarioFolders(
            environment: ProcessInfo.processInfo.environment, executable: runningExecutable(),
            currentDirectory: FileManager.default.currentDirectoryPath, installPrefix: builtPrefix)
    }

    /// The PREFIX this binary was built for.
    public static var builtPrefix: String { String(cString: hrm_install_prefix()) }

    /// The running executable's real path: `/proc/self/exe` on Linux, else `argv[0]` when it is a
    /// path (made absolute, symlinks resolved); nil when neither says.
    static func runningExecutable() -> String? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            path.hasPrefix("/")
        {
            return path
        }
        guard let argument = CommandLine.arguments.first, argument.contains("/") else { return nil }
        let absolute =
            argument.hasPrefix("/")
            ? URL(fileURLWithPath: argument)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(argument)
        return absolute.resolvingSymlinksInPath().path
    }
}
