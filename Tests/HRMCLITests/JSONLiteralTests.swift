import Testing

@testable import Monitor

/// The measurement line's keys and values are pieces of one literal, at offsets written by hand:
/// each must read as the text it stands for.
@Suite struct JSONLiteralTests {
    /// Every piece with the text it must have.
    static var all: [(JSONLiteral, String)] {
        [
            (.type, "type"), (.time, "time"), (.device, "device"), (.bpm, "bpm"), (.contact, "contact"),
            (.energyKJ, "energy_kj"), (.rr1024, "rr_1024"), (.rrMs, "rr_ms"), (.format, "format"),
            (.zone, "zone"), (.hex, "hex"), (.monoMs, "mono_ms"), (.null, "null"), (.detected, "detected"),
            (.notDetected, "not_detected"), (.unsupported, "unsupported"), (.uint8, "uint8"),
            (.uint16, "uint16"), (.measurement, "measurement"), (.status, "status"), (.info, "info"),
            (.battery, "battery"), (.hrv, "hrv"), (.alert, "alert"), (.summary, "summary"),
            (.error, "error"), (.relay, "relay"), (.ecg, "ecg"), (.acc, "acc"), (.ecgBeat, "ecg_beat"),
        ]
    }

    @Test func eachPieceIsItsText() {
        for (piece, text) in Self.all {
            #expect(piece.text == text)
        }
    }

    @Test func noPieceIsListedTwice() {
        let texts = Self.all.map(\.1)
        #expect(Set(texts).count == texts.count)
        #expect(Set(Self.all.map(\.0)).count == texts.count)
    }

    @Test func everyEventTypeIsNamedFromTheLiteral() {
        #expect(MonitorEventJSON.typeName(.battery(percent: 80)) == "battery")
        #expect(MonitorEventJSON.typeName(.relay(.subscribed, consumer: nil)) == "relay")
    }
}
