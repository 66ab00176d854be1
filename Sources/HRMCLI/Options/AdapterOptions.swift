public import ArgumentParser
import BlueZ
public import Monitor
import Outputs
import SessionLibrary

/// Which adapter to use, and whether hrm may power it on: every command that talks to Bluetooth
/// has these, so the hint "run hrm with --power-on" is true wherever it is given.
public struct AdapterOptions: ParsableArguments, Sendable {
    @Option(help: "The adapter to use: a name (hci0) or an address. Default: the first powered one.")
    public var adapter: String?

    @Flag(help: "Power the adapter on if it is off.")
    public var powerOn = false

    public init() {}
}

/// How long to look for the device a command names (`watch`, `reset-energy`).
public struct SearchOptions: ParsableArguments, Sendable {
    /// `.unconditional`: a value that starts with a dash (`-1`) is this option's value, and gets
    /// the message that says what is accepted instead of "Missing value".
    @Option(
        parsing: .unconditional,
        help: "How long to look for the device: seconds, or with a unit (30s, 2m). Default: 10.",
        transform: Seconds.parsing)
    public var scanTimeout: Seconds?

    static let defaultScanTimeout = AdapterChoice.defaultScanTimeout

    public init() {}

    public func validate() throws {
        try scanTimeout?.check(atMost: 3600, "--scan-timeout")
    }

    /// `--scan-timeout`; 10 s when not given.
    public var chosenScanTimeout: Seconds { scanTimeout ?? Self.defaultScanTimeout }
}

extension AdapterOptions {
    /// The choice as the monitoring core takes it.
    var choice: AdapterChoice { AdapterChoice(adapter: adapter, powerOn: powerOn) }

    /// The adapter chosen (`name`, else `--adapter`, else the first powered one), powered on
    /// when it is off and `--power-on` allows it.
    func usableAdapter(_ client: BlueZClient, named name: String? = nil) async throws(BlueZError) -> Adapter {
        try await choice.usableAdapter(client, named: name)
    }
}
