public import ArgumentParser

/// `-v`/`--verbose`: what hrm does on the bus, and why, logged to stderr for a bug report. The
/// commands that touch Bluetooth have it: scan, watch, record, reset-energy, serve.
public struct LogOptions: ParsableArguments, Sendable {
    @Flag(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Log to stderr what hrm does on the bus and why, for a bug report (-vv: each notification too; serve: clients coming and going). HRM_LOG=debug (or trace, info, ...) does the same without the flag; the flag wins."
        ))
    public var verbose: Int

    public init() {}

    /// Starts the process's logging at the level asked for (see `HRMLog.start`).
    public func start() {
        HRMLog.start(verbosity: verbose)
    }
}

/// A command with `LogOptions`: `HRM.run` starts logging with its choice. (`serve` has them too,
/// in `ServeArguments`, and `hrm-serve` starts logging with them.)
protocol LoggingCommand {
    var logOptions: LogOptions { get }
}

extension WatchCommand: LoggingCommand { var logOptions: LogOptions { log } }
extension RecordCommand: LoggingCommand { var logOptions: LogOptions { log } }
extension ScanCommand: LoggingCommand { var logOptions: LogOptions { log } }
extension ResetEnergyCommand: LoggingCommand { var logOptions: LogOptions { log } }
