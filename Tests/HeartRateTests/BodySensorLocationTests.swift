import HeartRate
import Testing

@Suite struct BodySensorLocationTests {
    @Test func everyByteRoundTrips() {
        for byte in UInt8.min...UInt8.max {
            #expect(BodySensorLocation(rawValue: byte).rawValue == byte)
        }
    }

    @Test func namedAndReservedValues() {
        #expect(BodySensorLocation(rawValue: 0) == .other)
        #expect(BodySensorLocation(rawValue: 1) == .chest)
        #expect(BodySensorLocation(rawValue: 5).identifier == "ear_lobe")
        #expect(BodySensorLocation(rawValue: 6) == .foot)
        #expect(BodySensorLocation(rawValue: 7) == .reserved(7))
        #expect(BodySensorLocation(rawValue: 9).identifier == "reserved(9)")
    }
}

@Suite struct BatteryAndControlPointTests {
    @Test func batteryLevels() throws {
        #expect(try BatteryLevel(decoding: [85]).percent == 85)
        #expect(try BatteryLevel(decoding: [100]).percent == 100)
        #expect(try BatteryLevel(decoding: [0]).percent == 0)
        let broken = try BatteryLevel(decoding: [101])
        #expect(broken.percent == nil)
        #expect(!broken.isValid)
        #expect(try BatteryLevel(decoding: [255]).rawValue == 255)
        #expect(throws: HeartRateDecodingError.self) { try BatteryLevel(decoding: []) }
    }

    @Test func locationFromBytes() throws {
        #expect(try BodySensorLocation(decoding: [1]) == .chest)
        #expect(throws: HeartRateDecodingError.self) { try BodySensorLocation(decoding: []) }
    }

    @Test func resetEnergyExpendedIsOneByte() {
        #expect(HeartRateControlPoint.resetEnergyExpended.encoded == [0x01])
    }
}
