/// Why a characteristic value could not be decoded, and where.
///
/// `code` is stable: tools match on it (`hrm decode --json` prints it). `offset` is the index of
/// the first byte of the field that could not be read, counted from the start of the frame.
public struct HeartRateDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong; the raw value is the stable identifier tools match on.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The frame has no bytes at all, not even the flags.
        case emptyFrame = "empty_frame"
        /// The frame ends inside the heart-rate value (UINT8 or UINT16, as the flags say).
        case truncatedHeartRate = "truncated_heart_rate"
        /// The flags announce Energy Expended but fewer than two bytes follow the value.
        case truncatedEnergy = "truncated_energy"
        /// The RR-interval field holds an odd number of bytes: the last interval is cut.
        case oddRRLength = "odd_rr_length"
    }

    /// What went wrong.
    public let code: Code
    /// Index of the first byte of the field that could not be read.
    public let offset: Int
    /// How many bytes that field needs.
    public let fieldLength: Int
    /// How many bytes the frame has in all.
    public let frameLength: Int

    /// An error at `offset` of a frame of `frameLength` bytes, in a field of `fieldLength` bytes.
    public init(code: Code, offset: Int, fieldLength: Int, frameLength: Int) {
        self.code = code
        self.offset = offset
        self.fieldLength = fieldLength
        self.frameLength = frameLength
    }

    /// One line in words: what is missing, at which byte, and how many of its bytes are present.
    public var description: String {
        let present = frameLength - offset
        let what =
            switch code {
            case .emptyFrame: "empty frame: not even the flags byte"
            case .truncatedHeartRate:
                "truncated heart rate: the flags announce a UINT\(fieldLength * 8) value at byte \(offset)"
            case .truncatedEnergy:
                "truncated energy expended: the flags announce a UINT16 at byte \(offset)"
            case .oddRRLength:
                "odd RR-interval length: the last interval starts at byte \(offset)"
            }
        if code == .emptyFrame { return what }
        return "\(what), but only \(present) of its \(fieldLength) bytes are present"
    }
}
