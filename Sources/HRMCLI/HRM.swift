public import ArgumentParser

/// The root command: `hrm <subcommand>`.
public struct HRM: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hrm",
        abstract: "A heart-rate monitor for Linux: Bluetooth LE chest straps through BlueZ.",
        version: "0.1.0",
        subcommands: []
    )

    public init() {}
}
