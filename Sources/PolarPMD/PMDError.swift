/// Why bytes from (or for) a Polar PMD service could not be read or written, and where.
///
/// `code` is stable: tools match on its raw value. `offset` is the index of the first byte of the
/// field that could not be read, counted from the start of the value (0 when the error concerns
/// the value as a whole or no byte at all).
public struct PMDError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong; the raw value is the stable identifier tools match on.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The value has no bytes at all.
        case empty = "pmd_empty"
        /// A control-point read that does not start with 0x0F, the feature read's marker.
        case notFeatures = "pmd_not_features"
        /// A control-point value that does not start with 0xF0, a command response's marker.
        case notResponse = "pmd_not_response"
        /// A feature read with no bitmask after its marker.
        case truncatedFeatures = "pmd_truncated_features"
        /// A command response shorter than its four fixed bytes (marker, op, type, status).
        case truncatedResponse = "pmd_truncated_response"
        /// A continuation ("more") response for another op code or measurement type.
        case mismatchedContinuation = "pmd_mismatched_continuation"
        /// A settings list names a setting type the SDK does not define (its size is unknown).
        case unknownSetting = "pmd_unknown_setting"
        /// A settings list ends inside a setting's header or values.
        case truncatedSetting = "pmd_truncated_setting"
        /// A setting asked for cannot be written in its field (negative, or too large).
        case settingOutOfRange = "pmd_setting_out_of_range"
        /// A data frame shorter than its ten-byte header (type, timestamp, frame type).
        case truncatedHeader = "pmd_truncated_header"
        /// A data frame with no samples after its header.
        case noSamples = "pmd_no_samples"
        /// A raw data frame whose length is not a whole number of samples.
        case truncatedSample = "pmd_truncated_sample"
        /// A frame type that this measurement's decoder does not know (as in the SDK's parsers).
        case unsupportedFrameType = "pmd_unsupported_frame_type"
        /// A compressed frame ends inside its reference sample.
        case truncatedReference = "pmd_truncated_reference"
        /// A compressed frame ends inside a delta block (its header or its bits).
        case truncatedDeltaBlock = "pmd_truncated_delta_block"
        /// A delta block whose bit width is 0 or wider than 32 bits.
        case invalidDeltaWidth = "pmd_invalid_delta_width"
        /// Sample times cannot be derived: no previous frame and no sample rate.
        case noSampleRate = "pmd_no_sample_rate"
        /// Sample times would fall before the sensor's epoch (2000-01-01), as the SDK refuses.
        case timestampBeforeEpoch = "pmd_timestamp_before_epoch"
    }

    /// What went wrong.
    public let code: Code
    /// Index of the first byte of the field that could not be read.
    public let offset: Int
    /// Details in words: the value found, what was expected.
    public let detail: String

    /// An error `code` at byte `offset`, with `detail` in words.
    public init(_ code: Code, offset: Int = 0, _ detail: String) {
        self.code = code
        self.offset = offset
        self.detail = detail
    }

    /// One line: the code, the byte and the details.
    public var description: String { "\(code.rawValue) at byte \(offset): \(detail)" }
}
