import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

#if canImport(Glibc)
    import Glibc
#endif

/// `Timestamp`'s calendar arithmetic against glibc's `gmtime_r`, the reference it replaced.
@Suite struct TimestampTests {
    /// Every day boundary and a spread of instants from 1600 to 9999, leap days and centuries
    /// included, before and after 1970.
    @Test func civilDatesAsGmtimeGivesThem() {
        var instants: [Int64] = [
            0, -1, 86_399, 86_400, -86_400, -86_401, 951_782_400, 951_868_799, 4_107_542_400,
        ]
        var seconds: Int64 = -11_676_096_000  // 1600-01-01
        while seconds < 253_402_300_799 {  // 9999-12-31T23:59:59
            instants.append(seconds)
            instants.append(seconds + 86_399)
            seconds += 86_400 * 37 + 3_607
        }
        var mismatches: [String] = []
        for instant in instants {
            var time = time_t(instant)
            var parts = tm()
            gmtime_r(&time, &parts)
            let expected = (
                Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour),
                Int(parts.tm_min), Int(parts.tm_sec)
            )
            let civil = Timestamp.civil(instant)
            if civil != expected { mismatches.append("\(instant): \(civil) against \(expected)") }
        }
        #expect(instants.count > 100_000)
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test func rfc3339WithMilliseconds() {
        #expect(Timestamp(millisecondsSinceEpoch: 0).description == "1970-01-01T00:00:00.000Z")
        #expect(
            Timestamp(millisecondsSinceEpoch: 1_795_335_429_123).description == "2026-11-22T08:17:09.123Z")
        #expect(Timestamp(millisecondsSinceEpoch: 951_782_400_007).description == "2000-02-29T00:00:00.007Z")
        #expect(Timestamp(millisecondsSinceEpoch: -1).description == "1969-12-31T23:59:59.999Z")
        // Every field at its place, against the calendar parts padded by interpolation.
        func padded(_ value: Int, _ width: Int) -> String {
            String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
        }
        var mismatches: [String] = []
        var milliseconds: Int64 = -11_676_096_000_000
        while milliseconds < 253_402_300_799_000 {
            let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
            let p = Timestamp.civil(seconds)
            let expected =
                "\(padded(p.year, 4))-\(padded(p.month, 2))-\(padded(p.day, 2))T\(padded(p.hour, 2)):"
                + "\(padded(p.minute, 2)):\(padded(p.second, 2)).\(padded(Int(milliseconds - seconds * 1000), 3))Z"
            let written = Timestamp(millisecondsSinceEpoch: milliseconds).description
            if written != expected { mismatches.append("\(milliseconds): \(written) against \(expected)") }
            milliseconds += 86_400_000 * 373 + 3_607_123
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// A writer that keeps the last second writes what a fresh one writes, whatever came before:
    /// the same second, the next, a day later, back in time, across 1970.
    @Test func reusingTheLastSecondWritesTheSame() {
        let instants: [Int64] = [
            1_795_335_429_123, 1_795_335_429_124, 1_795_335_429_999, 1_795_335_430_000, 1_795_335_429_500,
            1_795_421_829_500, 1_795_421_829_500, 0, -1, -1_000, -999, 999, 1_000, 951_782_399_999,
            951_782_400_000, Int64.min, Int64.max, 1_795_335_429_001,
        ]
        var last = Timestamp.LastSecond()
        var bytes = [UInt8](repeating: 0, count: Timestamp.width)
        for instant in instants {
            let time = Timestamp(millisecondsSinceEpoch: instant)
            let count = bytes.withUnsafeMutableBufferPointer { time.write(into: $0, reusing: &last) }
            #expect(String(decoding: bytes.prefix(count), as: UTF8.self) == time.description, "\(instant)")
        }
    }

    /// Out of the calendar's range (a hostile recording's instant): the form's width, no trap.
    @Test func extremeInstantsStillWriteTheirWidth() {
        for instant in [Int64.min, Int64.max, Int64.min / 2, Int64.max / 1000 * 1000] {
            #expect(Timestamp(millisecondsSinceEpoch: instant).description.utf8.count == Timestamp.width)
        }
    }

    @Test func nowIsRecent() {
        #expect(Timestamp.now().millisecondsSinceEpoch > 1_700_000_000_000)
    }
}
