/// The status a PMD command response carries, as polar-ble-sdk's `PmdControlPointResponseCode`
/// lists them (the iOS SDK's `PmdResponseCode` gives the same with words). A status the SDK does
/// not list is kept as `unknown`.
public enum PMDResponseStatus: Hashable, Sendable, CustomStringConvertible {
    /// 0: done.
    case success
    /// 1: the op code is not one the sensor knows.
    case invalidOpCode
    /// 2: the sensor has no such measurement.
    case invalidMeasurementType
    /// 3: the sensor does not support this.
    case notSupported
    /// 4: the command's length is wrong.
    case invalidLength
    /// 5: a parameter is wrong.
    case invalidParameter
    /// 6: already in that state (started twice, stopped twice).
    case alreadyInState
    /// 7: the resolution is not one offered.
    case invalidResolution
    /// 8: the sample rate is not one offered.
    case invalidSampleRate
    /// 9: the range is not one offered.
    case invalidRange
    /// 10: the link's MTU is too small for the stream.
    case invalidMTU
    /// 11: the number of channels is not one offered.
    case invalidNumberOfChannels
    /// 12: the sensor is not in a state to do this.
    case invalidState
    /// 13: the sensor is charging.
    case deviceInCharger
    /// 14: the sensor's memory is full.
    case diskFull
    /// A status the SDK does not list.
    case unknown(UInt8)

    /// The status of byte `raw`.
    public init(rawValue raw: UInt8) {
        self =
            switch raw {
            case 0: .success
            case 1: .invalidOpCode
            case 2: .invalidMeasurementType
            case 3: .notSupported
            case 4: .invalidLength
            case 5: .invalidParameter
            case 6: .alreadyInState
            case 7: .invalidResolution
            case 8: .invalidSampleRate
            case 9: .invalidRange
            case 10: .invalidMTU
            case 11: .invalidNumberOfChannels
            case 12: .invalidState
            case 13: .deviceInCharger
            case 14: .diskFull
            default: .unknown(raw)
            }
    }

    /// The byte on the wire.
    public var rawValue: UInt8 {
        switch self {
        case .success: 0
        case .invalidOpCode: 1
        case .invalidMeasurementType: 2
        case .notSupported: 3
        case .invalidLength: 4
        case .invalidParameter: 5
        case .alreadyInState: 6
        case .invalidResolution: 7
        case .invalidSampleRate: 8
        case .invalidRange: 9
        case .invalidMTU: 10
        case .invalidNumberOfChannels: 11
        case .invalidState: 12
        case .deviceInCharger: 13
        case .diskFull: 14
        case .unknown(let raw): raw
        }
    }

    /// Every status the SDK lists, in order of number.
    public static let listed: [PMDResponseStatus] = (0...14).map { PMDResponseStatus(rawValue: $0) }

    /// A stable identifier, for JSON and logs: `success`, `invalid_sample_rate`, ..., `unknown_N`.
    public var code: String {
        switch self {
        case .success: "success"
        case .invalidOpCode: "invalid_op_code"
        case .invalidMeasurementType: "invalid_measurement_type"
        case .notSupported: "not_supported"
        case .invalidLength: "invalid_length"
        case .invalidParameter: "invalid_parameter"
        case .alreadyInState: "already_in_state"
        case .invalidResolution: "invalid_resolution"
        case .invalidSampleRate: "invalid_sample_rate"
        case .invalidRange: "invalid_range"
        case .invalidMTU: "invalid_mtu"
        case .invalidNumberOfChannels: "invalid_number_of_channels"
        case .invalidState: "invalid_state"
        case .deviceInCharger: "device_in_charger"
        case .diskFull: "disk_full"
        case .unknown(let raw): "unknown_\(raw)"
        }
    }

    /// What it means, for a person.
    public var message: String {
        switch self {
        case .success: "success"
        case .invalidOpCode: "the sensor does not know this command"
        case .invalidMeasurementType: "the sensor has no such measurement"
        case .notSupported: "the sensor does not support this"
        case .invalidLength: "the command's length is wrong"
        case .invalidParameter: "a parameter of the command is wrong"
        case .alreadyInState: "the measurement is already in that state"
        case .invalidResolution: "the sensor does not offer this resolution"
        case .invalidSampleRate: "the sensor does not offer this sample rate"
        case .invalidRange: "the sensor does not offer this range"
        case .invalidMTU: "the link's MTU is too small for this stream"
        case .invalidNumberOfChannels: "the sensor does not offer this number of channels"
        case .invalidState: "the sensor is not in a state to do this"
        case .deviceInCharger: "the sensor is in its charger"
        case .diskFull: "the sensor's memory is full"
        case .unknown(let raw): "status \(raw), which Polar's SDK does not list"
        }
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

/// A response to a command, indicated on the control point: `[0xF0, op, type, status, more,
/// parameters]`.
///
/// As in the SDK, only a successful response has `more` and parameters; `more` says that the
/// parameters go on in another response (join them with `appending(continuation:)`).
public struct PMDResponse: Hashable, Sendable {
    /// The marker that starts a command response.
    public static let marker: UInt8 = 0xF0

    /// The op code answered, as on the wire (see `op`).
    public let opCode: UInt8
    /// The measurement type byte, as on the wire (bit 7: offline).
    public let typeByte: UInt8
    /// The outcome.
    public let status: PMDResponseStatus
    /// Whether more parameters follow in another response.
    public let more: Bool
    /// The parameters (a get-settings response: the settings offered; a start: the factor).
    public let parameters: [UInt8]

    /// The op code answered, nil for one the SDK does not define.
    public var op: PMDOpCode? { PMDOpCode(rawValue: opCode) }
    /// The measurement type answered about.
    public var type: PMDMeasurementType { PMDMeasurementType(rawValue: typeByte) }

    /// The response in `value`. Throws `empty`, `notResponse` or `truncatedResponse`.
    public init(decoding value: ArraySlice<UInt8>) throws(PMDError) {
        guard let first = value.first else {
            throw PMDError(.empty, "the control point's value has no bytes")
        }
        guard first == Self.marker else {
            throw PMDError(.notResponse, "a command response starts with 0xF0; this one with \(hex(first))")
        }
        guard value.count >= 4 else {
            throw PMDError(
                .truncatedResponse, offset: value.count,
                "a command response has at least 4 bytes (0xF0, op, type, status); this one has \(value.count)"
            )
        }
        let start = value.startIndex
        opCode = value[start + 1]
        typeByte = value[start + 2]
        status = PMDResponseStatus(rawValue: value[start + 3])
        if status == .success {
            more = value.count > 4 && value[start + 4] != 0
            parameters = value.count > 5 ? Array(value[(start + 5)...]) : []
        } else {
            more = false
            parameters = []
        }
    }

    private init(opCode: UInt8, typeByte: UInt8, status: PMDResponseStatus, more: Bool, parameters: [UInt8]) {
        self.opCode = opCode
        self.typeByte = typeByte
        self.status = status
        self.more = more
        self.parameters = parameters
    }

    /// This response with the parameters of `continuation`, the next response of the same command
    /// (what the SDK's `sendPmdCommand` does while `more` is set); `more` becomes the
    /// continuation's. Throws `mismatchedContinuation` when it answers another op or type.
    public func appending(continuation: PMDResponse) throws(PMDError) -> PMDResponse {
        guard continuation.opCode == opCode, continuation.typeByte == typeByte else {
            throw PMDError(
                .mismatchedContinuation,
                "a continuation of op \(opCode) type \(typeByte) answers op \(continuation.opCode) type \(continuation.typeByte)"
            )
        }
        return PMDResponse(
            opCode: opCode, typeByte: typeByte, status: continuation.status, more: continuation.more,
            parameters: parameters + continuation.parameters)
    }

    /// A get-settings (or start) response's parameters as settings.
    public func settings() throws(PMDError) -> PMDAvailableSettings {
        do {
            return try PMDAvailableSettings(decoding: parameters[...])
        } catch {
            // Offsets counted from the response's start, as for every other error here.
            throw PMDError(error.code, offset: error.offset + 5, error.detail)
        }
    }

    /// A measurement-status response's parameters (op 5): which measurements run, read as the
    /// SDK's `readMeasurementStatus` reads them, each byte a type (its low six bits) and a state
    /// (its top two). Types the SDK does not define are left out, as it leaves them out.
    public func measurementStates() -> [PMDMeasurementType: PMDMeasurementState] {
        var states: [PMDMeasurementType: PMDMeasurementState] = [:]
        for byte in parameters {
            let type = PMDMeasurementType(rawValue: byte)
            guard type.name != nil, type != .sdkMode, type != .offlineRecording else { continue }
            states[type] = PMDMeasurementState(statusByte: byte)
        }
        return states
    }

    /// The response's bytes (for a simulated sensor, and tests): `more` and the parameters only
    /// when the status is success, as a sensor sends them.
    public static func encode(
        op: PMDOpCode, type: PMDMeasurementType, status: PMDResponseStatus, more: Bool = false,
        parameters: [UInt8] = []
    ) -> [UInt8] {
        [marker, op.rawValue, type.rawValue, status.rawValue]
            + (status == .success ? [more ? 1 : 0] + parameters : [0])
    }
}

/// Whether a measurement runs, from a status byte's top two bits (the SDK's
/// `PmdActiveMeasurement`).
public enum PMDMeasurementState: UInt8, Hashable, Sendable {
    /// Neither streamed nor recorded.
    case inactive = 0
    /// Streamed.
    case online = 1
    /// Recorded on the sensor.
    case offline = 2
    /// Both.
    case onlineAndOffline = 3

    /// The state in bits 6 and 7 of `statusByte`.
    public init(statusByte: UInt8) {
        // Two bits give four values, all defined: the fallback is never taken.
        self = PMDMeasurementState(rawValue: statusByte >> 6) ?? .inactive
    }
}

/// What a value of the control point is: a feature read, a command response, or the sensor's
/// own notice that it stopped measurements (`[0x01, types...]`, the SDK's
/// `ONLINE_MEASUREMENT_STOPPED`). Through BlueZ a read of the control point also arrives as a
/// value change, so values are told apart by their first byte.
public enum PMDControlPointValue: Hashable, Sendable {
    /// A feature read: `[0x0F, bitmask]`.
    case features(PMDFeatures)
    /// A command response: `[0xF0, ...]`.
    case response(PMDResponse)
    /// The sensor stopped these online measurements by itself.
    case measurementStopped([PMDMeasurementType])
    /// Any other first byte (kept, not an error: the SDK logs and ignores those).
    case other([UInt8])

    /// The value `bytes`. Throws what `PMDFeatures` and `PMDResponse` throw for a value whose first
    /// byte says what it is but whose rest is malformed, and `empty`.
    public init(decoding bytes: ArraySlice<UInt8>) throws(PMDError) {
        guard let first = bytes.first else {
            throw PMDError(.empty, "the control point's value has no bytes")
        }
        switch first {
        case PMDResponse.marker: self = .response(try PMDResponse(decoding: bytes))
        case PMDFeatures.marker: self = .features(try PMDFeatures(decoding: bytes))
        case 0x01: self = .measurementStopped(bytes.dropFirst().map { PMDMeasurementType(rawValue: $0) })
        default: self = .other(Array(bytes))
        }
    }
}
