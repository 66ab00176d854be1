public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `-v`/`--verbose`: what hrm does on the bus, and why, logged to stderr for a bug report. The
/// commands that touch Bluetooth have it: scan, watch, record, relay, reset-energy, serve.
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

extension LogOptions {
    /// The log options of `command`, if it has them. (`serve` has them too, in `ServeArguments`,
    /// and `hrm-serve` starts logging with them.) Casts to the concrete commands, not to a
    /// protocol they would share: the first cast to a protocol scans every conformance record of
    /// the binary, about a million instructions at each start.
    static func of(_ command: any ParsableCommand) -> LogOptions? {
        switch command {
        case let watch as WatchCommand: watch.log
        case let record as RecordCommand: record.log
        case let scan as ScanCommand: scan.log
        case let reset as ResetEnergyCommand: reset.log
        case let relay as RelayCommand: relay.log
        case let pair as PairCommand: pair.log
        case let unpair as UnpairCommand: unpair.log
        default: nil
        }
    }
}
