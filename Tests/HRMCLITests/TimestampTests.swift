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
    }

    @Test func nowIsRecent() {
        #expect(Timestamp.now().millisecondsSinceEpoch > 1_700_000_000_000)
    }
}
