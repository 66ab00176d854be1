public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `--config FILE` and `--no-config`: which config file gives the defaults, if any. Every
/// command that takes defaults from the file has these.
public struct ConfigOptions: ParsableArguments, Sendable {
    @Option(
        help: ArgumentHelp(
            "Take defaults from this file instead of $XDG_CONFIG_HOME/hrm/config.toml (see the README).",
            valueName: "path"))
    public var config: String?

    @Flag(help: "Read no config file: only the command line's options.")
    public var noConfig = false

    public init() {}

    public func validate() throws {
        if config != nil && noConfig {
            throw ValidationError("--config and --no-config cannot be used together")
        }
        if config?.isEmpty == true { throw ValidationError("--config must not be empty") }
    }

    /// The file to read, if any: `--config`, else the default path (nil with `--no-config`).
    var path: String? { noConfig ? nil : config ?? ConfigFile.defaultPath }

    /// Whether there is a file to read.
    var fileExists: Bool { path.map { access($0, F_OK) == 0 } ?? false }

    /// The file's settings (none without a file). Unknown keys are reported on stderr; a file
    /// that cannot be used is reported there too, `hrm COMMAND: PATH:LINE: what is wrong`, and
    /// ends hrm with 66 (cannot be read) or 78 (wrong), before anything else happens.
    public func load(command: String) throws(ExitCode) -> Configuration {
        guard let path else { return Configuration() }
        do throws(ConfigError) {
            let (file, warnings) = try ConfigFile.load(path, required: config != nil)
            for warning in warnings { StandardOutput.diagnostic("hrm \(command): warning: \(warning)") }
            return file
        } catch {
            let hint =
                error.code == .unreadable && config != nil
                ? "" : "\n  hint: fix the file, or run with --no-config to leave it out"
            StandardOutput.diagnostic("hrm \(command): \(error)" + hint)
            throw ExitCode(error.exitStatus)
        }
    }
}
