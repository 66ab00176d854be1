import ArgumentParser
import BlueZSimulator
import Dispatch
import Foundation
import Spawn

/// `hrm-sim`: a simulated bluetoothd on a private bus, for tests and for trying hrm without a strap.
@main
struct HRMSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrm-sim",
        abstract: "A simulated BlueZ (bluetoothd) serving a scenario on a private D-Bus.",
        discussion: """
            Runs COMMAND against a simulated bluetoothd: starts a private dbus-daemon, serves \
            org.bluez on it as BlueZ 5.66 does, runs COMMAND with DBUS_SYSTEM_BUS_ADDRESS pointing \
            there, tears everything down and exits with COMMAND's status. Nothing touches the \
            machine's own system bus.

            Examples:
              hrm-sim -- hrm watch
              hrm-sim --scenario two-straps -- hrm scan --json
              hrm-sim --scenario drops --log sim.jsonl -- hrm watch --json --duration 20
              hrm-sim --scenario ./mine.json -- bluetoothctl
              hrm-sim --replay session.jsonl --speed 10 -- hrm watch --json
              hrm-sim --list

            With --replay, the simulated strap is the one of a recording (JSON lines of hrm watch \
            --json with a header, mono_ms and hex): its name, location, battery and model, every \
            recorded notification with the recorded gaps (divided by --speed), and the link drops \
            where the recording's did. --print-scenario prints that scenario, for --scenario.

            With --serve, hrm-sim serves on the bus named by DBUS_SYSTEM_BUS_ADDRESS until it is \
            stopped (Ctrl-C or SIGTERM) instead of running a command.

            Scenarios are JSON files: see Scenarios/README.md. The shipped ones are looked for in \
            $HRM_SIM_SCENARIOS, then share/hrm/scenarios beside the installed binary's bin folder, \
            then a Scenarios folder beside or above the binary (a build in the checkout), then the \
            PREFIX hrm-sim was built for, then ./Scenarios. The log (--log) has one JSON object \
            per line for each call clients made and each thing the simulator sent.

            Exit status: COMMAND's; 64 for bad options, 65 for an invalid scenario or recording, 66 \
            when a scenario or recording cannot be found or read, or is not a regular file (--list \
            with no scenarios found too), 69 when the private bus cannot be started, 73 when the log cannot be written, 127 \
            when COMMAND cannot be run.
            """
    )

    @Option(
        name: .shortAndLong, help: "A shipped scenario's name, or a path to a JSON file (default: basic).")
    var scenario: String?

    @Option(
        help: ArgumentHelp("Play back a recording of hrm watch instead of a scenario.", valueName: "session"))
    var replay: String?

    @Option(help: "With --replay: play N times faster (above 0; default 1).")
    var speed: Double?

    @Flag(help: "With --replay: print the scenario the recording makes, as JSON, and exit.")
    var printScenario = false

    @Option(
        help: ArgumentHelp("Write a JSON-lines log of calls and signals to this file.", valueName: "file"))
    var log: String?

    @Flag(help: "Serve on the bus in DBUS_SYSTEM_BUS_ADDRESS until stopped, instead of running a command.")
    var serve = false

    @Flag(name: .customLong("list"), help: "List the shipped scenarios, a line each, and exit.")
    var listScenarios = false

    @Option(help: ArgumentHelp("Say all about one shipped scenario and exit.", valueName: "name"))
    var describe: String?

    @Argument(
        parsing: .postTerminator, help: ArgumentHelp("The command to run, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if replay != nil && scenario != nil { throw ValidationError("give --scenario or --replay, not both") }
        if replay == nil && (speed != nil || printScenario) {
            throw ValidationError("--speed and --print-scenario go with --replay")
        }
        if let speed, !(speed.isFinite && speed > 0) {
            throw ValidationError("--speed: a number above 0 (2 plays twice as fast, 0.5 half as fast)")
        }
        if !listScenarios && !serve && !printScenario && describe == nil && command.isEmpty {
            throw ValidationError("give a command after --, or --serve, or --list")
        }
        if serve && !command.isEmpty { throw ValidationError("--serve runs no command") }
    }

    func run() async throws {
        if listScenarios {
            try listShippedScenarios()
            return
        }
        if let describe {
            do {
                print(try ScenarioCatalog.load(describe).description)
            } catch let error as ScenarioCatalog.LoadError {
                StandardError.say("hrm-sim: \(error)")
                throw ExitCode(66)
            }
            return
        }
        let loaded = try loadScenario()
        if printScenario {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(loaded), as: UTF8.self))
            return
        }
        let log: SimulatorLog
        do {
            log = try SimulatorLog(path: self.log)
        } catch {
            StandardError.say("hrm-sim: cannot write the log \(self.log ?? ""): \(error)")
            throw ExitCode(73)
        }
        if serve {
            try await serveUntilStopped(loaded, log: log)
        } else {
            let status = try await runCommand(loaded, log: log)
            throw ExitCode(status)
        }
    }

    /// --list: the shipped scenarios with their descriptions. None found is an error (exit 66,
    /// no input): an installed hrm-sim without its share folder cannot run its own examples.
    func listShippedScenarios() throws {
        let folders = ScenarioFolders.current()
        let names = ScenarioCatalog.names(in: folders)
        if names.isEmpty {
            StandardError.say(
                "hrm-sim: no scenarios found; looked in \(folders.candidates.joined(separator: ", ")) "
                    + "(install them with make install, or set HRM_SIM_SCENARIOS to a folder of them)")
            throw ExitCode(66)
        }
        for name in names {
            let description = (try? ScenarioCatalog.load(name, folders: folders))?.description ?? ""
            print("\(name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(Self.gist(description))")
        }
    }

    /// A description's first clause, for a line of --list: up to its first ". ", ": ", "; " or
    /// " (", and 80 characters at most, cut at a comma where there is one (the rest is
    /// --describe's).
    static func gist(_ description: String) -> String {
        var end = description.endIndex
        for mark in [". ", ": ", "; ", " ("] {
            if let found = description.range(of: mark), found.lowerBound < end { end = found.lowerBound }
        }
        var gist = String(description[..<end])
        if gist.hasSuffix(".") { gist.removeLast() }
        guard gist.count > 80 else { return gist }
        let head = gist.prefix(80)
        if let comma = head.range(of: ", ", options: .backwards) { return String(head[..<comma.lowerBound]) }
        return String(gist.prefix(79)) + "…"
    }

    /// The scenario named by --scenario, or made from --replay's recording.
    func loadScenario() throws -> Scenario {
        guard let replay else {
            do {
                return try ScenarioCatalog.load(scenario ?? "basic")
            } catch let error as ScenarioCatalog.LoadError {
                StandardError.say("hrm-sim: \(error)")
                switch error.kind {
                case .notFound: throw ExitCode(66)
                case .invalid: throw ExitCode(65)
                }
            } catch {
                StandardError.say("hrm-sim: \(error)")
                throw ExitCode(65)
            }
        }
        do {
            let loaded = try Recording.load(path: replay, speed: speed ?? 1)
            for warning in loaded.warnings {
                StandardError.say("hrm-sim: warning: \(replay): \(warning)")
            }
            return loaded.scenario
        } catch {
            StandardError.say("hrm-sim: \(error)")
            switch error {
            case .unreadable: throw ExitCode(66)
            case .invalid: throw ExitCode(65)
            }
        }
    }

    func serveUntilStopped(_ scenario: Scenario, log: SimulatorLog) async throws {
        guard let address = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"], !address.isEmpty
        else {
            StandardError.say("hrm-sim: --serve needs DBUS_SYSTEM_BUS_ADDRESS")
            throw ExitCode(64)
        }
        let simulator = Simulator(scenario: scenario, busAddress: address, log: log)
        try await simulator.start()
        await waitForSignal([SIGINT, SIGTERM, SIGHUP])
        await simulator.stop()
    }

    func runCommand(_ scenario: Scenario, log: SimulatorLog) async throws -> Int32 {
        let bus: PrivateBus
        do {
            bus = try PrivateBus(policy: PrivateBus.Policy(rawValue: scenario.busPolicy) ?? .open)
        } catch {
            StandardError.say("hrm-sim: \(error)")
            throw ExitCode(69)
        }
        defer { bus.stop() }
        let simulator = Simulator(scenario: scenario, busAddress: bus.address, log: log)
        do {
            try await simulator.start()
        } catch {
            StandardError.say("hrm-sim: cannot serve org.bluez: \(error)")
            throw ExitCode(69)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["HRM_SIM"] = "1"
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: command[0], arguments: Array(command.dropFirst()),
                environment: environment.map { "\($0.key)=\($0.value)" })
        } catch {
            await simulator.stop()
            StandardError.say("hrm-sim: \(error)")
            throw ExitCode(127)
        }
        // Ctrl-C reaches the whole foreground process group, COMMAND included (dbus-daemon has a
        // group of its own): hrm-sim itself ignores it and waits for COMMAND. SIGTERM, and the
        // SIGHUP of a closed terminal, sent to hrm-sim alone are passed on; either way hrm-sim
        // outlives COMMAND and cleans up after it (no dbus-daemon or bus folder left behind).
        signal(SIGINT, SIG_IGN)
        let forwards = [SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { child.send(number) }
            source.resume()
            return source
        }
        var status: Int32? = nil
        while status == nil { status = await child.wait(timeout: .seconds(3600)) }
        forwards.forEach { $0.cancel() }
        // What COMMAND sent just before exiting (hrm's last Disconnect) is handled, not dropped.
        await simulator.settle()
        await simulator.stop()
        return status ?? 1
    }

    func waitForSignal(_ signals: [Int32]) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            var sources: [any DispatchSourceSignal] = []
            for number in signals {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { if once.set() { continuation.resume() } }
                source.resume()
                sources.append(source)
            }
            SourceKeeper.keep(sources)
        }
    }
}

/// True the first time only.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func set() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if done { return false }
        done = true
        return true
    }
}

/// Keeps dispatch signal sources alive for the life of the process.
enum SourceKeeper {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    static func keep(_ more: [any DispatchSourceSignal]) { sources += more }
}
