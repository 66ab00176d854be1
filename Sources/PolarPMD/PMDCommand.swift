/// A control-point op code, as polar-ble-sdk's `PmdControlPointCommandClientToService` numbers them.
public enum PMDOpCode: UInt8, Hashable, Sendable, CaseIterable {
    /// Get the settings a measurement offers.
    case getMeasurementSettings = 1
    /// Start a measurement with settings.
    case requestMeasurementStart = 2
    /// Stop a measurement.
    case stopMeasurement = 3
    /// Get the settings offered in SDK mode.
    case getSDKModeMeasurementSettings = 4
    /// Which measurements run (one status byte per type).
    case getMeasurementStatus = 5
    /// Whether SDK mode is on.
    case getSDKModeStatus = 6
    /// The offline-recording trigger's status.
    case getOfflineRecordingTriggerStatus = 7
    /// Set the offline-recording trigger's mode.
    case setOfflineRecordingTriggerMode = 8
    /// Set the offline-recording trigger's settings.
    case setOfflineRecordingTriggerSettings = 9

    /// The SDK's name in lower case.
    public var name: String {
        switch self {
        case .getMeasurementSettings: "get_measurement_settings"
        case .requestMeasurementStart: "request_measurement_start"
        case .stopMeasurement: "stop_measurement"
        case .getSDKModeMeasurementSettings: "get_sdk_mode_measurement_settings"
        case .getMeasurementStatus: "get_measurement_status"
        case .getSDKModeStatus: "get_sdk_mode_status"
        case .getOfflineRecordingTriggerStatus: "get_offline_recording_trigger_status"
        case .setOfflineRecordingTriggerMode: "set_offline_recording_trigger_mode"
        case .setOfflineRecordingTriggerSettings: "set_offline_recording_trigger_settings"
        }
    }
}

/// A command written to the PMD control point: `[op, type byte, parameters]`, the type byte's bit 7
/// set for an offline recording.
public struct PMDCommand: Hashable, Sendable {
    /// The op code.
    public let op: PMDOpCode
    /// The measurement the command is about (nil for commands about none, like the status).
    public let type: PMDMeasurementType?
    /// The bytes to write.
    public let bytes: [UInt8]

    private init(op: PMDOpCode, type: PMDMeasurementType?, parameters: [UInt8]) {
        self.op = op
        self.type = type
        bytes = [op.rawValue] + parameters
    }

    /// Ask which settings `type` offers: `[0x01, type]`.
    public static func getSettings(_ type: PMDMeasurementType, recording: PMDRecordingType = .online)
        -> PMDCommand
    {
        PMDCommand(op: .getMeasurementSettings, type: type, parameters: [recording.bitField | type.rawValue])
    }

    /// Start `type` with `settings`: `[0x02, type, settings]`. The H10's ECG at 130 Hz and 14 bits
    /// is `02 00 00 01 82 00 01 01 0E 00`. Throws `settingOutOfRange` as
    /// `PMDSelectedSettings.encoded` does.
    public static func start(
        _ type: PMDMeasurementType, _ settings: PMDSelectedSettings, recording: PMDRecordingType = .online
    ) throws(PMDError) -> PMDCommand {
        PMDCommand(
            op: .requestMeasurementStart, type: type,
            parameters: [recording.bitField | type.rawValue] + (try settings.encoded()))
    }

    /// Stop `type`: `[0x03, type]`.
    public static func stop(_ type: PMDMeasurementType) -> PMDCommand {
        PMDCommand(op: .stopMeasurement, type: type, parameters: [type.rawValue])
    }

    /// Turn the SDK mode on: `[0x02, 0x09]` (the SDK's `startSDKMode`; it unlocks settings beyond
    /// the defaults on sensors that have it, not the H10).
    public static let startSDKMode = PMDCommand(
        op: .requestMeasurementStart, type: .sdkMode, parameters: [PMDMeasurementType.sdkMode.rawValue])

    /// Turn the SDK mode off: `[0x03, 0x09]`.
    public static let stopSDKMode = PMDCommand(
        op: .stopMeasurement, type: .sdkMode, parameters: [PMDMeasurementType.sdkMode.rawValue])

    /// Which measurements run: `[0x05]`.
    public static let measurementStatus = PMDCommand(op: .getMeasurementStatus, type: nil, parameters: [])
}
