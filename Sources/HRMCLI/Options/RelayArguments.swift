public import ArgumentParser
import Monitor
import Outputs

/// `--relay` and what goes with it: hrm serves the strap it watches as a Bluetooth LE heart-rate
/// sensor (what `hrm relay` always does).
public struct RelayArguments: ParsableArguments, Sendable {
    @Flag(
        help:
            "Also serve the strap as a Bluetooth heart-rate sensor for Zwift, a phone or a watch (see hrm relay)."
    )
    public var relay = false

    @Option(
        help: ArgumentHelp(
            "The adapter to serve the relay on: a name (hci1) or an address. (default: the one hrm watches on)",
            valueName: "adapter"))
    public var relayAdapter: String?

    @Option(
        help: ArgumentHelp(
            "The name the relay advertises, cut to fit the advertisement. (default: hrm and the strap's name)",
            valueName: "name"))
    public var relayName: String?

    public init() {}

    public func validate() throws {
        if let relayName, relayName.isEmpty || relayName.contains(where: \.isNewline) {
            throw ValidationError("--relay-name must not be empty or hold a line break")
        }
        if relayAdapter?.isEmpty == true { throw ValidationError("--relay-adapter must not be empty") }
    }
}

extension RelayArguments: OutputOptionGroup {
    var output: (any OutputProvider)? {
        relay ? RelayOutput(settings: RelaySettings(adapter: relayAdapter, name: relayName)) : nil
    }

    /// The config file has no relay keys yet.
    mutating func fill(from file: Configuration) {}
}
