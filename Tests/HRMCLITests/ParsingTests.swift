import HRMCLI
import Testing

@Suite struct ParsingTests {
    @Test func rootParses() throws {
        _ = try HRM.parseAsRoot([])
    }
}
