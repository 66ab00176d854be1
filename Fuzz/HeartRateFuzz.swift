// libFuzzer entry point for the Heart Rate decoders, built by `make fuzz` with
// `-sanitize=fuzzer,address` together with Sources/HeartRate (not part of the package build).
//
// Beyond "no crash", it checks the decoder's promises on every input:
// - an error's offset lies inside the frame and its field really is cut short;
// - a decoded measurement encodes back to the frame's prefix and decodes to itself again;
// - the other characteristics decode every non-empty input.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let frame = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    do {
        let m = try HeartRateMeasurement(decoding: frame)
        let encoded = m.encoded()
        precondition(encoded.count <= frame.count, "encoding is longer than the frame")
        precondition(encoded == Array(frame.prefix(encoded.count)), "encoding differs from the frame")
        precondition((try? HeartRateMeasurement(decoding: encoded)) == m, "decode(encode(m)) != m")
        var milliseconds = 0.0
        for interval in m.rrIntervals { milliseconds += interval.milliseconds }
        precondition(milliseconds >= 0)
    } catch {
        precondition(error.offset >= 0 && error.offset <= frame.count, "offset outside the frame")
        precondition(error.frameLength == frame.count)
        precondition(error.offset + error.fieldLength > frame.count, "reported a field that is complete")
    }
    let location = try? BodySensorLocation(decoding: frame[...])
    let battery = try? BatteryLevel(decoding: frame[...])
    precondition((location == nil) == frame.isEmpty && (battery == nil) == frame.isEmpty)
    return 0
}
