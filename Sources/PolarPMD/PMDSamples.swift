/// One ECG sample: the sensor's time and the voltage.
public struct PMDECGSample: Hashable, Sendable {
    /// The sensor's time, nanoseconds since 2000-01-01.
    public var timestamp: UInt64
    /// The voltage in microvolts.
    public var microvolts: Int32
    /// The status bits beside the value, as the frame type has them: type 1's third byte (bit 0
    /// oversampling, bits 1-2 skin contact, bits 3-4 contact impedance), type 2's third byte
    /// (bits 2-4 the ECG data tag, 5-7 the pace tag); 0 for type 0 (the H10's).
    public var status: UInt8

    /// A sample at `timestamp` of `microvolts`, with `status` bits.
    public init(timestamp: UInt64, microvolts: Int32, status: UInt8 = 0) {
        self.timestamp = timestamp
        self.microvolts = microvolts
        self.status = status
    }
}

/// One acceleration sample: the sensor's time and the three axes.
public struct PMDACCSample: Hashable, Sendable {
    /// The sensor's time, nanoseconds since 2000-01-01.
    public var timestamp: UInt64
    /// X in milli-g.
    public var x: Int32
    /// Y in milli-g.
    public var y: Int32
    /// Z in milli-g.
    public var z: Int32

    /// A sample at `timestamp`.
    public init(timestamp: UInt64, x: Int32, y: Int32, z: Int32) {
        self.timestamp = timestamp
        self.x = x
        self.y = y
        self.z = z
    }
}

/// The values of an ECG frame, without times, as polar-ble-sdk's `EcgData` reads each raw frame
/// type: 0 (the H10's) three bytes signed little-endian microvolts; 1 fourteen bits unsigned and
/// status bits; 2 twenty-two bits unsigned and tags. Compressed ECG frames and type 3 (two values
/// and a status per sample) are not read, as the SDK reads no compressed ECG.
public enum PMDECGValues {
    /// The microvolts and status bits of `frame`'s samples. Throws `unsupportedFrameType`,
    /// `noSamples` or `truncatedSample`.
    public static func decode(_ frame: PMDDataFrame) throws(PMDError) -> [(microvolts: Int32, status: UInt8)]
    {
        guard !frame.isCompressed, frame.frameType <= 2 else {
            throw PMDError(
                .unsupportedFrameType, offset: 9,
                "ECG frames of type \(frame.frameType)\(frame.isCompressed ? " (compressed)" : "") are not read, as in Polar's SDK"
            )
        }
        let content = frame.content
        try checkWhole(content, sampleSize: 3)
        var values: [(microvolts: Int32, status: UInt8)] = []
        values.reserveCapacity(content.count / 3)
        var index = content.startIndex
        while index < content.endIndex {
            let b0 = UInt32(content[index])
            let b1 = UInt32(content[index + 1])
            let b2 = content[index + 2]
            switch frame.frameType {
            case 0: values.append((signExtend(b0 | b1 << 8 | UInt32(b2) << 16, bits: 24), 0))
            case 1: values.append((Int32(b0 | (b1 & 0x3F) << 8), b2))
            default: values.append((Int32(b0 | b1 << 8 | (UInt32(b2) & 0x03) << 16), b2))
            }
            index += 3
        }
        return values
    }
}

/// The values of an acceleration frame, without times, in milli-g, as polar-ble-sdk's `AccData`
/// reads them: raw frame types 0, 1 and 2 hold x, y, z of one, two or three bytes each, signed
/// little-endian (the H10 sends type 1); compressed type 0 holds 16-bit deltas in g scaled by the
/// factor × 1000, compressed type 1 16-bit deltas scaled by the factor (when it is not 1).
public enum PMDACCValues {
    /// `frame`'s samples, x, y and z after one another. `factor` is the one the start response
    /// reported (1 when none). Throws `unsupportedFrameType`, `noSamples`, `truncatedSample` and
    /// the errors of `PMDDeltaCoding`.
    public static func decode(_ frame: PMDDataFrame, factor: Float = 1) throws(PMDError) -> [Int32] {
        let content = frame.content
        if frame.isCompressed {
            guard frame.frameType <= 1 else {
                throw PMDError(
                    .unsupportedFrameType, offset: 9,
                    "compressed acceleration frames of type \(frame.frameType) are not read, as in Polar's SDK"
                )
            }
            guard !content.isEmpty else { throw PMDError(.noSamples, offset: 10, "the frame has no samples") }
            let raw = try PMDDeltaCoding.decode(content, channels: 3, resolution: 16, offsetBase: 10)
            // Float arithmetic and truncation toward zero, as the SDK's `(sample * factor).toInt()`.
            if frame.frameType == 0 {
                let scale = factor * 1000
                return raw.map { truncatedInt32(Float($0) * scale) }
            }
            guard factor != 1 else { return raw }
            return raw.map { truncatedInt32(Float($0) * factor) }
        }
        guard frame.frameType <= 2 else {
            throw PMDError(
                .unsupportedFrameType, offset: 9,
                "acceleration frames of type \(frame.frameType) are not read, as in Polar's SDK")
        }
        let width = Int(frame.frameType) + 1
        try checkWhole(content, sampleSize: 3 * width)
        var values: [Int32] = []
        values.reserveCapacity(content.count / width)
        var index = content.startIndex
        while index < content.endIndex {
            values.append(
                signExtend(
                    UInt32(truncatingIfNeeded: littleEndian(content[index..<(index + width)])),
                    bits: 8 * width))
            index += width
        }
        return values
    }
}

/// Throws `noSamples` for empty content and `truncatedSample` when its length is not a whole
/// number of samples.
private func checkWhole(_ content: ArraySlice<UInt8>, sampleSize: Int) throws(PMDError) {
    guard !content.isEmpty else { throw PMDError(.noSamples, offset: 10, "the frame has no samples") }
    let rest = content.count % sampleSize
    guard rest == 0 else {
        throw PMDError(
            .truncatedSample, offset: 10 + content.count - rest,
            "samples are \(sampleSize) bytes; the last has \(rest) of them")
    }
}

/// `value` truncated toward zero as Kotlin's `Float.toInt()` does: NaN is 0, and values beyond
/// Int32 clamp to its bounds (a factor comes from the sensor: it may be anything).
func truncatedInt32(_ value: Float) -> Int32 {
    guard !value.isNaN else { return 0 }
    if value >= 2_147_483_648 { return .max }
    if value <= -2_147_483_648 { return .min }
    return Int32(value.rounded(.towardZero))
}
