public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary
import Threads

/// The root command: `hrm <subcommand>`.
public struct HRM: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hrm",
        abstract: "A heart-rate monitor for Linux: Bluetooth LE chest straps through BlueZ.",
        discussion: """
            hrm finds heart-rate monitors (chest straps, armbands, watches that broadcast their \
            heart rate) through bluetoothd, shows what they send live, records sessions and \
            exports them (FIT, TCX, CSV), computes heart-rate variability, publishes to MQTT and \
            Home Assistant, and serves a live page for stream overlays. hrm-sim plays bluetoothd \
            with simulated straps, for trying hrm without one.

            Exit status: 0 on success, 64 on a usage error (a misspelt command gets the nearest \
            one named); each command's page says what else it returns.
            """,
        version: HRMVersion.current,
        subcommands: [
            ScanCommand.self, WatchCommand.self, RecordCommand.self, RelayCommand.self, SessionsCommand.self,
            TrendsCommand.self, ReadinessCommand.self, ExportCommand.self,
            ResetEnergyCommand.self, PairCommand.self, UnpairCommand.self,
            DecodeCommand.self, HRVCommand.self, TeamCommand.self, ServeCommand.self, ForgetCommand.self,
            ConfigCommand.self,
        ]
    )

    public init() {}

    /// Parses `arguments` and runs the chosen subcommand, awaiting it when it is asynchronous.
    /// (Spelled out because top-level code picks ParsableCommand's synchronous `main()`.)
    public static func run(arguments: [String]) async -> Never {
        let names = configuration.subcommands.compactMap { $0.configuration.commandName }
        if let first = arguments.first, let message = CommandSuggestion.unknown(first, among: names) {
            StandardOutput.diagnostic(message)
            exit(withError: ExitCode(64))  // EX_USAGE, as ArgumentParser's own usage errors
        }
        do {
            var command = try parse(arguments)
            // The parse's reflection allocated and freed about 0.3 MiB: its pages go back to the
            // kernel before the run instead of staying resident through it (Benchmarks/Watch).
            MainThread.trimFreedMemory()
            // Once, before anything logs: -v of the commands that have it, else HRM_LOG. Not for
            // serve: hrm-serve, which it runs in its place, starts its own (a bad HRM_LOG is
            // reported once).
            if !(command is ServeCommand) { HRMLog.start(verbosity: LogOptions.of(command)?.verbose ?? 0) }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(withError: nil)
        } catch {
            exit(withError: error)
        }
    }

    /// The command `arguments` name. A subcommand's arguments are parsed by that subcommand
    /// alone first: the parser, given `hrm watch ...`, builds the whole option set of `watch`
    /// more times by reflection while it looks for `watch` (7.6 of the parse's 37 million
    /// instructions at every start; Benchmarks/Watch/README.md, "Issue #29, third session").
    /// Anything that does not parse so into that subcommand (`--help`, a usage error, a nested
    /// subcommand, no subcommand) goes through the root's parse, which says what it always did.
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        if let first = arguments.first,
            let subcommand = configuration.subcommands.first(where: { $0.configuration.commandName == first }
            ),
            let command = try? subcommand.parseAsRoot(Array(arguments.dropFirst())),
            // Not the parser's own (help, a nested subcommand): those read the whole tree.
            type(of: command) == subcommand
        {
            return command
        }
        return try parseAsRoot(arguments)
    }
}
