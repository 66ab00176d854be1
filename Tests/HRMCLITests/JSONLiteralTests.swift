import Testing

@testable import Monitor

/// The measurement line's keys and values are pieces of one literal, at offsets written by hand:
/// each must read as the text it stands for.
@Suite struct JSONLiteralTests {
    @Test func eachPieceIsItsText() {
        for (piece, text) in JSONLiteral.all {
            #expect(piece.text == text)
        }
    }

    @Test func noPieceIsListedTwice() {
        let texts = JSONLiteral.all.map(\.1)
        #expect(Set(texts).count == texts.count)
        #expect(Set(JSONLiteral.all.map(\.0)).count == texts.count)
    }

    @Test func everyEventTypeIsNamedFromTheLiteral() {
        #expect(MonitorEventJSON.typeName(.battery(percent: 80)) == "battery")
        #expect(MonitorEventJSON.typeName(.relay(.subscribed, consumer: nil)) == "relay")
    }
}
