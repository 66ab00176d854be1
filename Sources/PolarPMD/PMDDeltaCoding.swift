/// Polar's delta compression, as polar-ble-sdk's `BlePMDClient.parseDeltaFramesAll` reads it.
///
/// A frame's samples are a reference sample (each channel `resolution` bits rounded up to whole
/// bytes, little-endian, sign-extended from bit `resolution - 1`), then blocks of
/// `[bit width][sample count][count × channels deltas, bit-packed]`. The deltas are read least
/// significant bit first (bit 0 of the first byte is the first delta's bit 0), each sign-extended
/// from its top bit and added to the previous sample. Arithmetic wraps at 32 bits, as the SDK's
/// `Int` does (32-bit channels carry float bits that way).
public enum PMDDeltaCoding {
    /// The samples of `content`, channel after channel (`channels` values per sample), the
    /// reference sample first. Throws `truncatedReference`, `truncatedDeltaBlock` or
    /// `invalidDeltaWidth`; offsets are counted from `content`'s start plus `offsetBase`.
    public static func decode(
        _ content: ArraySlice<UInt8>, channels: Int, resolution: Int, offsetBase: Int = 0
    ) throws(PMDError) -> [Int32] {
        precondition(channels > 0 && (1...32).contains(resolution), "a caller's constant, not outside data")
        let referenceBytes = (resolution + 7) / 8
        let start = content.startIndex
        guard content.count >= channels * referenceBytes else {
            throw PMDError(
                .truncatedReference, offset: offsetBase + content.count,
                "the reference sample needs \(channels * referenceBytes) bytes; the frame has \(content.count)"
            )
        }
        var samples: [Int32] = []
        samples.reserveCapacity(channels * 16)
        for channel in 0..<channels {
            let first = start + channel * referenceBytes
            let raw = UInt32(truncatingIfNeeded: littleEndian(content[first..<(first + referenceBytes)]))
            samples.append(signExtend(raw, bits: resolution))
        }
        var index = start + channels * referenceBytes
        while index < content.endIndex {
            guard index + 1 < content.endIndex else {
                throw PMDError(
                    .truncatedDeltaBlock, offset: offsetBase + index - start,
                    "a delta block's header has 2 bytes (bit width, count); 1 remains")
            }
            let width = Int(content[index])
            let count = Int(content[index + 1])
            guard (1...32).contains(width) else {
                throw PMDError(
                    .invalidDeltaWidth, offset: offsetBase + index - start,
                    "a delta block's bit width is 1 to 32; this one's is \(width)")
            }
            index += 2
            let bitCount = width * count * channels
            let byteCount = (bitCount + 7) / 8
            guard content.endIndex - index >= byteCount else {
                throw PMDError(
                    .truncatedDeltaBlock, offset: offsetBase + index - start,
                    "a delta block of \(count) samples at \(width) bits needs \(byteCount) bytes; \(content.endIndex - index) remain"
                )
            }
            var bit = 0
            for _ in 0..<count {
                let previous = samples.count - channels
                for channel in 0..<channels {
                    let delta = signExtend(
                        readBits(content, from: index, bit: bit, width: width), bits: width)
                    samples.append(samples[previous + channel] &+ delta)
                    bit += width
                }
            }
            index += byteCount
        }
        return samples
    }

    /// `width` bits starting `bit` bits into the bytes from `base`, least significant first.
    private static func readBits(_ bytes: ArraySlice<UInt8>, from base: Int, bit: Int, width: Int) -> UInt32 {
        var value: UInt64 = 0
        var taken = 0
        var position = bit
        while taken < width {
            let byte = UInt64(bytes[base + position / 8])
            let offset = position % 8
            let take = min(8 - offset, width - taken)
            value |= ((byte >> UInt64(offset)) & ((1 << UInt64(take)) - 1)) << UInt64(taken)
            taken += take
            position += take
        }
        return UInt32(truncatingIfNeeded: value)
    }
}

/// `raw`'s low `bits` bits as a signed number.
func signExtend(_ raw: UInt32, bits: Int) -> Int32 {
    guard bits < 32 else { return Int32(bitPattern: raw) }
    let shift = UInt32(32 - bits)
    return Int32(bitPattern: raw << shift) >> Int32(shift)
}
