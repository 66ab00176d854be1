/// A frame notified on the PMD data characteristic, its header read and its samples left as bytes:
/// `[type][timestamp: u64 LE][frame type][samples]`.
///
/// The timestamp is the sensor's time of the frame's last sample, in nanoseconds since
/// 2000-01-01 (see `PMDTime`). The frame-type byte's bit 7 says the samples are delta-compressed,
/// its bits 0-6 which of the measurement's layouts they use (polar-ble-sdk's `PmdDataFrame`).
public struct PMDDataFrame: Hashable, Sendable {
    /// The length of the header.
    public static let headerLength = 10

    /// The measurement.
    public let type: PMDMeasurementType
    /// The sensor's time of the last sample, in nanoseconds since 2000-01-01.
    public let timestamp: UInt64
    /// The frame type: the layout of the samples (bits 0-6 of the frame-type byte).
    public let frameType: UInt8
    /// Whether the samples are delta-compressed (bit 7 of the frame-type byte).
    public let isCompressed: Bool
    /// The samples' bytes.
    public let content: ArraySlice<UInt8>

    /// The frame in `bytes`. Throws `empty` or `truncatedHeader`; the samples are read by
    /// `PMDECGSamples` and `PMDACCSamples`.
    public init(decoding bytes: ArraySlice<UInt8>) throws(PMDError) {
        guard !bytes.isEmpty else { throw PMDError(.empty, "the data frame has no bytes") }
        guard bytes.count >= Self.headerLength else {
            throw PMDError(
                .truncatedHeader, offset: bytes.count,
                "a data frame's header has 10 bytes (type, timestamp, frame type); this frame has \(bytes.count)"
            )
        }
        let start = bytes.startIndex
        type = PMDMeasurementType(rawValue: bytes[start])
        timestamp = littleEndian(bytes[(start + 1)..<(start + 9)])
        let frameTypeByte = bytes[start + 9]
        frameType = frameTypeByte & 0x7F
        isCompressed = frameTypeByte & 0x80 != 0
        content = bytes[(start + Self.headerLength)...]
    }

    /// The bytes of a frame (for a simulated sensor, and tests).
    public static func encode(
        type: PMDMeasurementType, timestamp: UInt64, frameType: UInt8, compressed: Bool = false,
        content: [UInt8]
    ) -> [UInt8] {
        var bytes: [UInt8] = [type.rawValue]
        for shift in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: timestamp >> (8 * UInt64(shift)))) }
        bytes.append((frameType & 0x7F) | (compressed ? 0x80 : 0))
        return bytes + content
    }

    /// The frame type as the SDK's enum keys it: bits 0-6 and the compression bit together. The
    /// decoder keeps each key's previous timestamp apart, as the SDK's `previousTimeStampMap` does.
    var key: UInt8 { frameType | (isCompressed ? 0x80 : 0) }
}
