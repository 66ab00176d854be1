public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `hrm relay`: `hrm watch` that also serves the strap as a Bluetooth LE heart-rate sensor.
public struct RelayCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Watch a heart-rate monitor and serve it as a Bluetooth heart-rate sensor.",
        discussion: """
            The same as hrm watch (every option works as there), and hrm serves the strap as a \
            Bluetooth LE heart-rate sensor, so that Zwift, a phone, a bike computer or a watch can \
            read it while hrm holds it (most straps take only one or two connections). hrm \
            registers a GATT application (Heart Rate, Battery, Device Information) and an \
            advertisement with bluetoothd on --relay-adapter (default: the adapter hrm watches on) \
            before it touches the strap; each notification of the strap goes to every \
            subscribed consumer as the strap sent it, nothing while the strap is away. Each \
            consumer that connects, subscribes, unsubscribes or leaves is a relay event. No \
            pairing is needed. --relay on hrm watch, record and serve does the same.

            Ctrl-C and SIGTERM take the advertisement and the application back first, then stop \
            as hrm watch does.

            Exit status: as hrm watch; 69 when the adapter cannot serve as a peripheral or \
            bluetoothd refuses the relay (say, every advertising slot is taken).
            """
    )

    @OptionGroup public var arguments: WatchArguments

    @OptionGroup(title: "Logging") public var log: LogOptions

    @OptionGroup public var recordFile: RecordFileOption

    public init() {}

    public mutating func run() async throws {
        StandardOutput.prepare()
        try arguments.applyConfigFile(command: "relay")
        arguments.outputs.relay.relay = true
        let status = await WatchSession.run(
            arguments.options(command: "relay", recording: recordFile.recording))
        if status != 0 { throw ExitCode(status) }
    }
}
