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
