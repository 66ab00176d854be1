public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// What `watch` and `record` share: the strap, the output, when to stop, Bluetooth, HRV, zones
/// and alerts.
public struct WatchArguments: ParsableArguments, Sendable {
    @Argument(
        help: ArgumentHelp(
            "Address or part of the name of each monitor; ADAPTER/DEVICE (hci1/C0:FF:EE:00:00:01) to reach one through another adapter.",
            valueName: "device"))
    public var devices: [String] = []

    @Flag(help: "Watch every heart-rate monitor the scan finds.")
    public var all = false

    @OptionGroup public var output: OutputOptions

    @OptionGroup public var limits: LimitOptions

    @OptionGroup public var bluetooth: AdapterOptions

    @Flag(help: "Exit when the link drops instead of reconnecting.")
    public var noReconnect = false

    @Flag(
        help:
            "Subscribe by StartNotify, so that other programs on this machine can read the strap too (by default hrm holds it alone, by AcquireNotify)."
    )
    public var share = false

    @OptionGroup public var search: SearchOptions

    @OptionGroup(title: "ECG and acceleration (Polar H10)") public var sensors: SensorOptions

    @OptionGroup(title: "Heart-rate variability") public var hrv: HRVOptions

    @OptionGroup(title: "Zones") public var zones: ZoneOptions

    @OptionGroup public var outputs: OutputArguments

    @OptionGroup public var configFile: ConfigOptions

    public init() {}

    public func validate() throws {
        let requests = devices.map(StrapRequest.init(parsing:))
        if requests.contains(where: { $0.wanted.isEmpty }) {
            throw ValidationError("DEVICE must not be empty: it would match any strap")
        }
        if all && !devices.isEmpty {
            throw ValidationError("--all watches every monitor found: give it without DEVICE arguments")
        }
        for (index, request) in requests.enumerated() where requests[..<index].contains(request) {
            throw ValidationError("\(request.spoken) is given twice")
        }
        // A config file may give the broker; without one this is a usage error at once.
        if outputs.mqtt.detailsGiven, outputs.mqtt.mqtt == nil, !configFile.fileExists {
            throw ValidationError("the --mqtt-… and --ha-… options need --mqtt URL")
        }
    }

    /// The session's choices, recording to `recording` if any (the recording gets each event
    /// first).
    func options(command: String, recording: RecordingChoice?) -> WatchOptions {
        WatchOptions(
            command: command, straps: devices.map(StrapRequest.init(parsing:)), all: all,
            limits: limits.runLimits, bluetooth: bluetooth.choice, reconnect: !noReconnect, share: share,
            sensorStreams: sensors.streams, scanTimeout: search.chosenScanTimeout,
            hrv: sensors.hrv(hrv.settings),
            zones: zones.chosen, alertAbove: outputs.alerts.alertAbove, alertBelow: outputs.alerts.alertBelow,
            maximumHeartRate: zones.maxHr,
            outputs: (recording.map { [RecordingOutput(choice: $0)] } ?? []) + outputs.requested,
            display: StdoutOutput(format: output.chosen, colour: output.chosenColor),
            console: StandardConsole(command: command, json: output.chosen == .json), logs: HRMLog.session)
    }
}
