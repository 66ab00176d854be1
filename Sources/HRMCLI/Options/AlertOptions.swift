public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `--alert-above`, `--alert-below` and `--on-alert`.
public struct AlertOptions: ParsableArguments, Sendable {
    @Option(help: ArgumentHelp("Alert when the heart rate stays above this for 3 s.", valueName: "bpm"))
    public var alertAbove: Int?

    @Option(help: ArgumentHelp("Alert when the heart rate stays below this for 3 s.", valueName: "bpm"))
    public var alertBelow: Int?

    @Option(
        help: ArgumentHelp(
            "Run this shell command once per alert, with HRM_ALERT (above/below), HRM_BPM, HRM_BOUND and HRM_DEVICE set.",
            valueName: "command"))
    public var onAlert: String?

    public init() {}

    public func validate() throws {
        for (name, value) in [("--alert-above", alertAbove), ("--alert-below", alertBelow)] {
            if let value, !(25...250).contains(value) {
                throw ValidationError("\(name) must be a heart rate from 25 to 250 bpm")
            }
        }
        if let alertAbove, let alertBelow, alertBelow >= alertAbove {
            throw ValidationError("--alert-below must be below --alert-above")
        }
        if onAlert != nil, alertAbove == nil, alertBelow == nil {
            throw ValidationError("--on-alert needs --alert-above or --alert-below")
        }
        if onAlert?.allSatisfy({ $0 == " " }) == true {
            throw ValidationError("--on-alert must not be empty")
        }
    }

    var wanted: Bool { alertAbove != nil || alertBelow != nil }
}

extension AlertOptions: OutputOptionGroup {
    var output: (any OutputProvider)? { onAlert.map(AlertCommandOutput.init) }

    /// The config file has no alerts: they belong to one workout, not to every run.
    mutating func fill(from file: Configuration) {}
}
