/// Battery Level (0x2A19): the remaining charge in percent, one byte.
///
/// The specification allows 0-100. A sensor that sends more is reported as invalid rather than
/// clamped, so a broken sensor shows up as broken.
public struct BatteryLevel: Hashable, Sendable {
    /// The byte as sent.
    public let rawValue: UInt8

    /// The byte as read, whether or not it is a valid percentage.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The charge in percent, or nil when the byte is above 100.
    public var percent: UInt8? {
        rawValue <= 100 ? rawValue : nil
    }

    /// True when the byte is a percentage (0-100).
    public var isValid: Bool { rawValue <= 100 }

    /// Decodes the characteristic value; bytes after the first are ignored.
    public init(decoding value: ArraySlice<UInt8>) throws(HeartRateDecodingError) {
        guard let first = value.first else {
            throw HeartRateDecodingError(code: .emptyFrame, offset: 0, fieldLength: 1, frameLength: 0)
        }
        self.init(rawValue: first)
    }
}

extension BodySensorLocation {
    /// Decodes the characteristic value; bytes after the first are ignored.
    public init(decoding value: ArraySlice<UInt8>) throws(HeartRateDecodingError) {
        guard let first = value.first else {
            throw HeartRateDecodingError(code: .emptyFrame, offset: 0, fieldLength: 1, frameLength: 0)
        }
        self.init(rawValue: first)
    }
}
