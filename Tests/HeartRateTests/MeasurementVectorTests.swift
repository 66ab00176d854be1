import HeartRate
import Testing

/// Spec vectors written out byte by byte, independent of the encoder.
@Suite struct MeasurementVectorTests {
    @Test func uint8ValueWithoutAnythingElse() throws {
        let m = try HeartRateMeasurement(decoding: [0x00, 0x48])
        #expect(m.heartRate == 72)
        #expect(m.valueFormat == .uint8)
        #expect(m.sensorContact == .unsupported)
        #expect(m.energyExpended == nil)
        #expect(m.rrIntervals.isEmpty)
        #expect(m.flags == 0x00)
    }

    @Test func uint8IsUnsigned() throws {
        #expect(try HeartRateMeasurement(decoding: [0x06, 0x96]).heartRate == 150)
        #expect(try HeartRateMeasurement(decoding: [0x00, 0xFF]).heartRate == 255)
    }

    @Test func uint16IsLittleEndian() throws {
        // 0x012C = 300 bpm; read big-endian it would be 0x2C01 = 11265.
        let m = try HeartRateMeasurement(decoding: [0x07, 0x2C, 0x01])
        #expect(m.heartRate == 300)
        #expect(m.valueFormat == .uint16)
        #expect(m.sensorContact == .detected)
        // A server may send UINT16 for a small value.
        #expect(try HeartRateMeasurement(decoding: [0x01, 0x48, 0x00]).heartRate == 72)
        #expect(try HeartRateMeasurement(decoding: [0x01, 0xFF, 0xFF]).heartRate == 65535)
    }

    @Test(arguments: [
        (UInt8(0x00), HeartRateMeasurement.SensorContact.unsupported),
        (0x02, .unsupported),
        (0x04, .notDetected),
        (0x06, .detected),
    ])
    func sensorContactBits(flags: UInt8, contact: HeartRateMeasurement.SensorContact) throws {
        #expect(try HeartRateMeasurement(decoding: [flags, 60]).sensorContact == contact)
        #expect(try HeartRateMeasurement(decoding: [flags | 1, 60, 0]).sensorContact == contact)
    }

    @Test func rrIntervalIsLittleEndianTicks() throws {
        // RR `01 02` is 0x0201 = 513 ticks of 1/1024 s, not 258 and not milliseconds.
        let m = try HeartRateMeasurement(decoding: [0x10, 0x48, 0x01, 0x02])
        #expect(m.rrIntervals.ticks == [513])
        #expect(m.rrIntervals.milliseconds == [500.9765625])
    }

    @Test func exactMilliseconds() {
        #expect(RRInterval(ticks: 1024).milliseconds == 1000)
        #expect(RRInterval(ticks: 845).milliseconds == 825.1953125)
        #expect(RRInterval(ticks: 1).milliseconds == 0.9765625)
        #expect(RRInterval(ticks: 65535).milliseconds == 63999.0234375)
        #expect(RRInterval(ticks: 512).seconds == 0.5)
    }

    @Test func issueExample() throws {
        // flags 0x16: UINT8, contact detected, RR present.
        let m = try HeartRateMeasurement(decoding: [0x16, 0x48, 0x4D, 0x03])
        #expect(m.heartRate == 72)
        #expect(m.sensorContact == .detected)
        #expect(m.rrIntervals.ticks == [845])
        #expect(m.rrIntervals.milliseconds == [825.1953125])
        #expect(m.flags == 22)
    }

    @Test func energySitsBetweenValueAndRR() throws {
        // UINT8 72, energy 0x0102 = 258 kJ, RR 0x0400 = 1024 ticks.
        let m = try HeartRateMeasurement(decoding: [0x18, 0x48, 0x02, 0x01, 0x00, 0x04])
        #expect(m.energyExpended == 258)
        #expect(m.rrIntervals.ticks == [1024])
        // UINT16 300, energy 0xFFFF (saturated), two RR.
        let n = try HeartRateMeasurement(decoding: [0x19, 0x2C, 0x01, 0xFF, 0xFF, 0x00, 0x04, 0x4D, 0x03])
        #expect(n.heartRate == 300)
        #expect(n.energyExpended == 0xFFFF)
        #expect(n.isEnergySaturated)
        #expect(n.rrIntervals.ticks == [1024, 845])
    }

    @Test func energyZeroIsPresentNotAbsent() throws {
        let m = try HeartRateMeasurement(decoding: [0x08, 0x48, 0x00, 0x00])
        #expect(m.energyExpended == 0)
        #expect(!m.isEnergySaturated)
    }

    @Test func reservedBitsAreIgnoredButKept() throws {
        let m = try HeartRateMeasurement(decoding: [0xE0, 0x48])
        #expect(m.heartRate == 72)
        #expect(m.energyExpended == nil)
        #expect(m.rrIntervals.isEmpty)
        #expect(m.flags == 0xE0)
        #expect(m.encoded() == [0xE0, 0x48])
    }

    @Test func lenientRRFlagWithoutBytes() throws {
        let m = try HeartRateMeasurement(decoding: [0x10, 0x48])
        #expect(m.rrIntervals.isEmpty)
        #expect(m.encoded() == [0x10, 0x48])
    }

    @Test func lenientTrailingBytesWithoutRRFlag() throws {
        let m = try HeartRateMeasurement(decoding: [0x00, 0x48, 0xAA, 0xBB, 0xCC])
        #expect(m.heartRate == 72)
        #expect(m.rrIntervals.isEmpty)
        let e = try HeartRateMeasurement(decoding: [0x08, 0x48, 0x05, 0x00, 0xAA])
        #expect(e.energyExpended == 5)
        #expect(e.rrIntervals.isEmpty)
    }

    /// Every combination of flags bits 0-4 with 0, 1 and 3 RR intervals, frames built by hand.
    @Test func everyFlagCombination() throws {
        let rrSets: [[UInt16]] = [[], [845], [1024, 0x0201, 0xFFFF]]
        for flags in UInt8(0)..<32 {
            for rr in rrSets where flags & 0x10 != 0 || rr.isEmpty {
                let uint16 = flags & 0x01 != 0
                let value: UInt16 = uint16 ? 0x1234 : 0xB4
                var frame: [UInt8] = [flags, UInt8(value & 0xFF)]
                if uint16 { frame.append(UInt8(value >> 8)) }
                let energy: UInt16 = 0xBEEF
                if flags & 0x08 != 0 { frame += [0xEF, 0xBE] }
                for t in rr { frame += [UInt8(t & 0xFF), UInt8(t >> 8)] }

                let m = try HeartRateMeasurement(decoding: frame)
                #expect(m.flags == flags)
                #expect(m.heartRate == value)
                #expect(m.valueFormat == (uint16 ? .uint16 : .uint8))
                #expect(m.energyExpended == (flags & 0x08 != 0 ? energy : nil))
                #expect(m.rrIntervals.ticks == rr)
                let contact: HeartRateMeasurement.SensorContact =
                    switch (flags >> 1) & 3 {
                    case 3: .detected
                    case 2: .notDetected
                    default: .unsupported
                    }
                #expect(m.sensorContact == contact)
                #expect(m.encoded() == frame, "flags \(flags) rr \(rr)")
            }
        }
    }

    /// The most RR intervals that fit in one notification at the default ATT MTU of 23 (20 bytes
    /// of value): 9 with a UINT8 value, 8 with UINT16 or with energy, 7 with both.
    @Test(arguments: [
        (UInt8(0x10), 9), (0x11, 8), (0x18, 8), (0x19, 7),
    ])
    func largestRRCountAtDefaultMTU(flags: UInt8, count: Int) throws {
        var frame: [UInt8] = [flags, 0x48]
        if flags & 0x01 != 0 { frame.append(0x00) }
        if flags & 0x08 != 0 { frame += [0x10, 0x00] }
        let ticks = (0..<count).map { UInt16(700 + $0 * 37) }
        for t in ticks { frame += [UInt8(t & 0xFF), UInt8(t >> 8)] }
        #expect(frame.count <= 20)
        #expect(frame.count + 2 > 20, "one more interval would not fit")
        let m = try HeartRateMeasurement(decoding: frame)
        #expect(m.rrIntervals.count == count)
        #expect(m.rrIntervals.ticks == ticks)
    }

    /// At MTU 517 (514 bytes of value) a frame carries 256 intervals: no fixed cap.
    @Test func fullMTU517Frame() throws {
        var frame: [UInt8] = [0x10, 0x3C]
        let ticks = (0..<256).map { UInt16(truncatingIfNeeded: $0 * 251 + 3) }
        for t in ticks { frame += [UInt8(t & 0xFF), UInt8(t >> 8)] }
        #expect(frame.count == 514)
        let m = try HeartRateMeasurement(decoding: frame)
        #expect(m.rrIntervals.count == 256)
        #expect(m.rrIntervals.ticks == ticks)
        #expect(m.rrIntervals.last?.ticks == ticks.last)
    }

    @Test func decodesFromASliceWithNonZeroStart() throws {
        let buffer: [UInt8] = [0xAA, 0xBB, 0x16, 0x48, 0x4D, 0x03]
        let m = try HeartRateMeasurement(decoding: buffer[2...])
        #expect(m.heartRate == 72)
        #expect(m.rrIntervals.ticks == [845])
        #expect(m == (try HeartRateMeasurement(decoding: [0x16, 0x48, 0x4D, 0x03])))
    }
}
