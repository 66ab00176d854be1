import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

@Suite struct TimestampTests {
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
