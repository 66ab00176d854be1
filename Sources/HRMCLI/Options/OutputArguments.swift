public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// An output's options on the command line: the group `hrm watch`, `record` and `serve` parse
/// for it, and what it takes from the config file.
protocol OutputOptionGroup: ParsableArguments {
    /// The output these options ask for; nil when they ask for none.
    var output: (any OutputProvider)? { get }
    /// Takes from the config file what the command line left out.
    mutating func fill(from file: Configuration)
}

/// The options of the outputs that have some (beyond stdout's format): one `@OptionGroup` per
/// output, each listed in `registry`, in the order the outputs get events. Registering an output
/// with options is its group's line here and its entry in `registry`.
public struct OutputArguments: ParsableArguments, Sendable {
    @OptionGroup(title: "Alerts") public var alerts: AlertOptions

    @OptionGroup(title: "MQTT") public var mqtt: MQTTArguments

    @OptionGroup(title: "OSC") public var osc: OSCArguments

    @OptionGroup(title: "Relay") public var relay: RelayArguments

    private static var registry: [Registered] {
        [Registered(\.alerts), Registered(\.mqtt), Registered(\.osc), Registered(\.relay)]
    }

    public init() {}

    /// The outputs these options ask for, in the registry's order.
    var requested: [any OutputProvider] { Self.registry.compactMap { $0.output(self) } }

    /// Each group takes from the config file what the command line left out.
    mutating func fill(from file: Configuration) {
        for entry in Self.registry { entry.fill(&self, file) }
    }

    /// One group of the registry, whatever its type.
    private struct Registered {
        let output: (OutputArguments) -> (any OutputProvider)?
        let fill: (inout OutputArguments, Configuration) -> Void

        init<Group: OutputOptionGroup>(_ path: WritableKeyPath<OutputArguments, Group>) {
            output = { $0[keyPath: path].output }
            fill = { $0[keyPath: path].fill(from: $1) }
        }
    }
}
