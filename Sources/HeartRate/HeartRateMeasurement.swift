/// Heart Rate Measurement (0x2A37), as defined by the Bluetooth SIG Heart Rate Service 1.0.
///
/// A frame is, in this order and little-endian throughout:
/// flags (UINT8) → heart rate (UINT8 or UINT16, flags bit 0) → Energy Expended (UINT16 kJ,
/// present when flags bit 3 is set) → RR intervals (UINT16 each, 1/1024 s, oldest first, as many
/// as the frame holds, present when flags bit 4 is set). Flags bits 1-2 are the sensor-contact
/// status; bits 5-7 are reserved and ignored (but kept, so that encoding gives the frame back).
public struct HeartRateMeasurement: Hashable, Sendable {
    /// How the heart-rate value is carried.
    public enum ValueFormat: String, Hashable, Sendable {
        /// Flags bit 0 clear: one byte, 0-255 bpm.
        case uint8
        /// Flags bit 0 set: two bytes, little-endian.
        case uint16
    }

    /// Sensor Contact status, flags bits 1-2.
    public enum SensorContact: String, Hashable, Sendable {
        /// Bits 1-2 are 0 or 1: the sensor does not report contact.
        case unsupported
        /// Bits 1-2 are 2: the sensor reports contact, and there is none (a dry or loose strap).
        case notDetected
        /// Bits 1-2 are 3: the sensor is in contact with the skin.
        case detected

        /// The stable identifier used in JSON output.
        public var identifier: String {
            switch self {
            case .unsupported: "unsupported"
            case .notDetected: "not_detected"
            case .detected: "detected"
            }
        }
    }

    @usableFromInline enum Flag {
        @usableFromInline static let uint16Value: UInt8 = 0x01
        @usableFromInline static let contactMask: UInt8 = 0x06
        @usableFromInline static let contactSupported: UInt8 = 0x04
        @usableFromInline static let contactDetected: UInt8 = 0x06
        @usableFromInline static let energyPresent: UInt8 = 0x08
        @usableFromInline static let rrPresent: UInt8 = 0x10
    }

    /// Energy Expended at or above this value is saturated: the sensor needs a reset (0x2A39).
    public static let energySaturationValue: UInt16 = 0xFFFF

    /// The flags byte exactly as sent, reserved bits included.
    public let flags: UInt8
    /// Beats per minute.
    public let heartRate: UInt16
    /// Energy Expended in kilojoules since the last reset, when the frame carries it (flags bit 3).
    public var energyExpended: UInt16? { flags & Flag.energyPresent != 0 ? energy : nil }
    /// Energy Expended as kept: 0 when the frame carries none. Not an optional, whose tag would
    /// make a measurement with its zone (an event's payload) one value too many for the compiler
    /// to pass in registers: each copy of one went through the runtime's generic tuple copy
    /// (#29, Benchmarks/Watch/README.md, seventh session).
    @usableFromInline let energy: UInt16
    /// RR intervals, oldest first; empty when the frame carries none.
    public let rrIntervals: RRIntervals

    /// How the heart rate was carried (flags bit 0).
    public var valueFormat: ValueFormat {
        flags & Flag.uint16Value == 0 ? .uint8 : .uint16
    }

    /// The Sensor Contact status of flags bits 1-2.
    public var sensorContact: SensorContact {
        switch flags & Flag.contactMask {
        case Flag.contactDetected: .detected
        case Flag.contactSupported: .notDetected
        default: .unsupported
        }
    }

    /// True when Energy Expended has reached 0xFFFF and stopped counting.
    public var isEnergySaturated: Bool {
        energyExpended == Self.energySaturationValue
    }

    /// Builds a measurement from its values. The flags follow from them; `reservedFlags` (bits
    /// 5-7 only) lets tests and the simulator send what a future sensor might.
    ///
    /// - Throws: `HeartRateEncodingError.valueTooLarge` when `format` is `.uint8` and the value
    ///   does not fit in a byte. Without a format, UINT8 is used when the value fits.
    public init(
        heartRate: UInt16,
        format: ValueFormat? = nil,
        sensorContact: SensorContact = .unsupported,
        energyExpended: UInt16? = nil,
        rrIntervals: RRIntervals = RRIntervals(),
        reservedFlags: UInt8 = 0
    ) throws(HeartRateEncodingError) {
        let format = format ?? (heartRate <= UInt8.max ? .uint8 : .uint16)
        if format == .uint8 && heartRate > UInt8.max {
            throw HeartRateEncodingError.valueTooLarge(heartRate)
        }
        var flags = reservedFlags & 0xE0
        if format == .uint16 { flags |= Flag.uint16Value }
        switch sensorContact {
        case .unsupported: break
        case .notDetected: flags |= Flag.contactSupported
        case .detected: flags |= Flag.contactDetected
        }
        if energyExpended != nil { flags |= Flag.energyPresent }
        if !rrIntervals.isEmpty { flags |= Flag.rrPresent }
        self.init(
            flags: flags, heartRate: heartRate, energyExpended: energyExpended, rrIntervals: rrIntervals)
    }

    /// `flags` says whether the frame carries `energyExpended` (bit 3), as both callers make it.
    @inlinable init(flags: UInt8, heartRate: UInt16, energyExpended: UInt16?, rrIntervals: RRIntervals) {
        self.flags = flags
        self.heartRate = heartRate
        self.energy = energyExpended ?? 0
        self.rrIntervals = rrIntervals
    }
}

/// Why a measurement could not be built from the values given.
public enum HeartRateEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A UINT8 value was asked for, and the heart rate needs 16 bits.
    case valueTooLarge(UInt16)

    /// The error in words, with the value that did not fit.
    public var description: String {
        switch self {
        case .valueTooLarge(let value): "heart rate \(value) does not fit in a UINT8 value"
        }
    }
}

// MARK: - Decoding

extension HeartRateMeasurement {
    /// Decodes one frame.
    ///
    /// Lenient where the specification leaves room: the RR flag with no RR bytes gives no
    /// intervals; bytes after the value and energy when the RR flag is clear are ignored.
    /// The intervals keep a slice of `frame`; nothing is copied or allocated.
    @inlinable
    public init(decoding frame: [UInt8]) throws(HeartRateDecodingError) {
        // Reading through a borrowed buffer costs no reference counting; only a frame with RR
        // intervals takes a slice (one retain) to keep them.
        let fields = try frame.withUnsafeBufferPointer { (bytes) throws(HeartRateDecodingError) in
            try Fields(parsing: bytes)
        }
        self.init(
            fields: fields,
            rrIntervals: fields.rrStart < frame.count
                ? RRIntervals(littleEndianBytes: frame[fields.rrStart...]) : RRIntervals())
    }

    /// Decodes one frame held in a slice (offsets in errors count from the slice's start).
    @inlinable
    public init(decoding frame: ArraySlice<UInt8>) throws(HeartRateDecodingError) {
        let fields = try frame.withUnsafeBufferPointer { (bytes) throws(HeartRateDecodingError) in
            try Fields(parsing: bytes)
        }
        let rrStart = frame.startIndex + fields.rrStart
        self.init(
            fields: fields,
            rrIntervals: rrStart < frame.endIndex
                ? RRIntervals(littleEndianBytes: frame[rrStart...]) : RRIntervals())
    }

    @inlinable init(fields: Fields, rrIntervals: RRIntervals) {
        self.init(
            flags: fields.flags, heartRate: fields.heartRate, energyExpended: fields.energyExpended,
            rrIntervals: rrIntervals)
    }

    /// The fixed fields of a frame, and where its RR intervals start (the frame's length when
    /// there are none to keep).
    @usableFromInline struct Fields {
        @usableFromInline let flags: UInt8
        @usableFromInline let heartRate: UInt16
        @usableFromInline let energyExpended: UInt16?
        @usableFromInline let rrStart: Int

        @inlinable init(parsing frame: UnsafeBufferPointer<UInt8>) throws(HeartRateDecodingError) {
            let length = frame.count
            guard length > 0 else {
                throw HeartRateDecodingError(code: .emptyFrame, offset: 0, fieldLength: 1, frameLength: 0)
            }
            flags = frame[0]
            var offset: Int
            if flags & Flag.uint16Value == 0 {
                guard length >= 2 else {
                    throw HeartRateDecodingError(
                        code: .truncatedHeartRate, offset: 1, fieldLength: 1, frameLength: length)
                }
                heartRate = UInt16(frame[1])
                offset = 2
            } else {
                guard length >= 3 else {
                    throw HeartRateDecodingError(
                        code: .truncatedHeartRate, offset: 1, fieldLength: 2, frameLength: length)
                }
                heartRate = UInt16(frame[1]) | UInt16(frame[2]) << 8
                offset = 3
            }

            if flags & Flag.energyPresent != 0 {
                guard length >= offset + 2 else {
                    throw HeartRateDecodingError(
                        code: .truncatedEnergy, offset: offset, fieldLength: 2, frameLength: length)
                }
                energyExpended = UInt16(frame[offset]) | UInt16(frame[offset + 1]) << 8
                offset += 2
            } else {
                energyExpended = nil
            }

            if flags & Flag.rrPresent != 0 {
                guard (length - offset) % 2 == 0 else {
                    throw HeartRateDecodingError(
                        code: .oddRRLength, offset: length - 1, fieldLength: 2, frameLength: length)
                }
                rrStart = offset
            } else {
                rrStart = length
            }
        }
    }
}

// MARK: - Encoding

extension HeartRateMeasurement {
    /// The frame for this measurement: the exact inverse of `init(decoding:)`.
    public func encoded() -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(5 + rrIntervals.littleEndianBytes.count)
        encode(into: &frame)
        return frame
    }

    /// Appends the frame for this measurement to `frame`.
    public func encode(into frame: inout [UInt8]) {
        frame.append(flags)
        frame.append(UInt8(truncatingIfNeeded: heartRate))
        if valueFormat == .uint16 {
            frame.append(UInt8(truncatingIfNeeded: heartRate >> 8))
        }
        if let energyExpended {
            frame.append(UInt8(truncatingIfNeeded: energyExpended))
            frame.append(UInt8(truncatingIfNeeded: energyExpended >> 8))
        }
        if flags & Flag.rrPresent != 0 {
            frame.append(contentsOf: rrIntervals.littleEndianBytes)
        }
    }
}
