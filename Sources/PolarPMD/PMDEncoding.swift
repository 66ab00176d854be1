/// The sensor's side of PMD, for a simulated sensor (hrm-sim) and for tests: what a Polar sensor
/// sends, written as polar-ble-sdk reads it.

extension PMDFeatures {
    /// A feature read offering `types`: `[0x0F, bitmask]`, the bitmask as long as the highest
    /// type needs (two bytes at least, as sensors send it).
    public static func encode(_ types: [PMDMeasurementType]) -> [UInt8] {
        var mask: [UInt8] = [0, 0]
        for type in types {
            let byte = Int(type.rawValue) / 8
            while mask.count <= byte { mask.append(0) }
            mask[byte] |= 1 << (type.rawValue % 8)
        }
        return [marker] + mask
    }
}

extension PMDAvailableSettings {
    /// The settings offered as a get-settings response's parameters: `[type, count, values]` for
    /// each setting, in order of type. Throws `settingOutOfRange` for a value that does not fit
    /// its field.
    public static func encode(_ values: [PMDSettingType: [Int]]) throws(PMDError) -> [UInt8] {
        var bytes: [UInt8] = []
        for type in values.keys.sorted() where type != .security {
            guard let list = values[type], !list.isEmpty, list.count < 256 else { continue }
            bytes.append(type.rawValue)
            bytes.append(UInt8(list.count))
            for value in list {
                let single = try PMDSelectedSettings([type: value]).encodedAllowingFactor()
                bytes.append(contentsOf: single.dropFirst(2))
            }
        }
        return bytes
    }
}

extension PMDSelectedSettings {
    /// Like `encoded`, the factor included (a start response reports it).
    func encodedAllowingFactor() throws(PMDError) -> [UInt8] {
        guard let factor = values[.factor] else { return try encoded() }
        var rest = self
        rest.values[.factor] = nil
        var bytes = try rest.encoded()
        bytes.append(PMDSettingType.factor.rawValue)
        bytes.append(1)
        for byte in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: factor >> (8 * byte))) }
        return bytes
    }
}

extension PMDECGValues {
    /// ECG frame type 0's samples: three bytes signed little-endian each, values clamped to 24 bits.
    public static func encodeType0(_ microvolts: [Int32]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(3 * microvolts.count)
        for value in microvolts {
            let raw = UInt32(bitPattern: min(max(value, -8_388_608), 8_388_607))
            bytes += [UInt8(raw & 0xFF), UInt8(raw >> 8 & 0xFF), UInt8(raw >> 16 & 0xFF)]
        }
        return bytes
    }
}

extension PMDACCValues {
    /// A raw acceleration frame's samples, x, y and z after one another, of `frameType` 0, 1 or 2
    /// (one, two or three bytes an axis, signed little-endian; the H10 sends 1), values clamped to
    /// the width. nil for another frame type.
    public static func encodeRaw(_ values: [Int32], frameType: UInt8) -> [UInt8]? {
        guard frameType <= 2 else { return nil }
        let width = Int(frameType) + 1
        let limit = Int64(1) << (8 * width - 1)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * values.count)
        for value in values {
            let clamped = UInt32(bitPattern: Int32(min(max(Int64(value), -limit), limit - 1)))
            for byte in 0..<width { bytes.append(UInt8(truncatingIfNeeded: clamped >> (8 * UInt32(byte)))) }
        }
        return bytes
    }
}

extension PMDDeltaCoding {
    /// `samples` (channel after channel, `channels` values per sample, the first sample the
    /// reference) delta-compressed as `decode` reads them: the reference in `resolution` bits
    /// rounded up to bytes, then blocks of at most `blockSamples` samples (1 to 255), each with
    /// the narrowest bit width that holds its deltas, 2 at least (the SDK reads a 1-bit delta of
    /// 1 as 2^31 - 1 rather than -1). The samples' count must be a multiple of
    /// `channels` (a caller's constant, as in `decode`) and the reference must fit `resolution`.
    public static func encode(
        _ samples: [Int32], channels: Int, resolution: Int, blockSamples: Int = 32
    ) -> [UInt8] {
        precondition(channels > 0 && (1...32).contains(resolution) && (1...255).contains(blockSamples))
        precondition(
            samples.count >= channels && samples.count % channels == 0, "whole samples, a reference first")
        var bytes: [UInt8] = []
        let referenceBytes = (resolution + 7) / 8
        for channel in 0..<channels {
            let raw = UInt32(bitPattern: samples[channel])
            for byte in 0..<referenceBytes {
                bytes.append(UInt8(truncatingIfNeeded: raw >> (8 * UInt32(byte))))
            }
        }
        let count = samples.count / channels
        var sample = 1
        while sample < count {
            let blockCount = min(blockSamples, count - sample)
            var deltas: [Int32] = []
            deltas.reserveCapacity(blockCount * channels)
            for index in sample..<(sample + blockCount) {
                for channel in 0..<channels {
                    deltas.append(
                        samples[index * channels + channel] &- samples[(index - 1) * channels + channel])
                }
            }
            let width = max(2, deltas.map(bitsNeeded).max() ?? 2)
            bytes.append(UInt8(width))
            bytes.append(UInt8(blockCount))
            var accumulator: UInt64 = 0
            var filled = 0
            for delta in deltas {
                let bits = UInt64(UInt32(bitPattern: delta)) & ((1 << UInt64(width)) - 1)
                accumulator |= bits << UInt64(filled)
                filled += width
                while filled >= 8 {
                    bytes.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator >>= 8
                    filled -= 8
                }
            }
            if filled > 0 { bytes.append(UInt8(truncatingIfNeeded: accumulator)) }
            sample += blockCount
        }
        return bytes
    }

    /// The fewest bits that hold `value` in two's complement (1 at least).
    static func bitsNeeded(_ value: Int32) -> Int {
        var width = 1
        while width < 32 {
            let limit = Int64(1) << (width - 1)
            if Int64(value) >= -limit && Int64(value) < limit { return width }
            width += 1
        }
        return 32
    }
}
