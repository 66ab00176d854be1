import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// Outside text printed for people goes through one sanitiser: nothing in a name or a message
/// can drive the terminal, forge a line or flood the screen.
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("Polar H10 7E102030", "Polar H10 7E102030"),
        ("Evil\u{1B}]0;pwned\u{07}\nFAKE LINE", "Evil\\e]0;pwned\\a\\nFAKE LINE"),
        ("a\rb\tc", "a\\rb\\tc"),
        ("\u{00}\u{08}\u{1F}\u{7F}", "\\x00\\x08\\x1f\\x7f"),
        ("C1 \u{9B}31m \u{85}", "C1 \\x9b31m \\x85"),
        ("x\u{2028}y\u{2029}", "x\\u{2028}y\\u{2029}"),
        ("\u{202E}gpj.exe", "\\u{202E}gpj.exe"),
        ("\u{2066}\u{2069}\u{200F}\u{061C}", "\\u{2066}\\u{2069}\\u{200F}\\u{061C}"),
        ("Café Zürich ❤️ 心拍", "Café Zürich ❤️ 心拍"),
        ("back\\slash", "back\\slash"),
        ("\r\n", "\\r\\n"),
    ])
    func escapesWhatIsNotPlainText(text: String, shown: String) {
        #expect(TerminalText.sanitised(text, limit: 200) == shown)
    }

    @Test func noControlCharacterSurvives() {
        let every = String(String.UnicodeScalarView((0..<0x3000).compactMap(Unicode.Scalar.init)))
        let shown = TerminalText.sanitised(every, limit: .max)
        #expect(
            !shown.unicodeScalars.contains {
                $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" || $0 == "\u{202E}"
            })
    }

    /// Sanitised text passes through again unchanged: the stderr backstop cannot double-escape.
    @Test func sanitisingTwiceChangesNothing() {
        let once = TerminalText.sanitised("Evil\u{1B}[2J\u{07}\n\u{202E}x", limit: .max)
        #expect(TerminalText.sanitised(once, limit: .max) == once)
    }

    @Test func capsTheLengthWithAnEllipsis() {
        let flood = String(repeating: "A", count: 100_000)
        #expect(TerminalText.sanitised(flood, limit: 64) == String(repeating: "A", count: 64) + "…")
        #expect(TerminalText.sanitised(String(repeating: "A", count: 64), limit: 64).count == 64)
        // An escape counts at its printed length and is never cut in half.
        #expect(TerminalText.sanitised("ab\u{1B}cd", limit: 3) == "ab…")
        #expect(TerminalText.sanitised("ab\u{1B}cd", limit: 4) == "ab\\e…")
        // One character of 100 000 combining marks is cut whole, not printed whole.
        let zalgo = "Z" + String(repeating: "\u{0301}", count: 100_000)
        #expect(TerminalText.sanitised("ok " + zalgo, limit: 64) == "ok …")
        // A cut falls between characters: an accented letter keeps its accent.
        #expect(TerminalText.sanitised("e\u{0301}e\u{0301}e\u{0301}", limit: 4) == "e\u{0301}e\u{0301}…")
    }

    @Test func watchLinesSanitiseNamesMakersModelsAndDetails() {
        let evil = "Evil\u{1B}]0;pwned\u{07}\nFAKE LINE"
        let info = WatchText.info(
            address: "D2:4B:7E:10:20:30", name: evil, location: .chest, battery: 87,
            manufacturer: "Maker\u{1B}[31m", model: String(repeating: "M", count: 10_000))
        #expect(info.hasPrefix("Evil\\e]0;pwned\\a\\nFAKE LINE (D2:4B:7E:10:20:30): worn on the chest"))
        #expect(info.contains("Maker\\e[31m " + String(repeating: "M", count: 64) + "…"))
        #expect(!info.unicodeScalars.contains { $0.value < 0x20 })

        var lines = TextLinesRenderer()
        let status = MonitorEvent(
            device: nil, kind: .status(.disconnected, detail: "le-connection\u{1B}[2J\r\nFAKE; retrying"))
        let line = lines.render(status) ?? ""
        #expect(line.hasSuffix("-- disconnected: le-connection\\e[2J\\r\\nFAKE; retrying\n"))
        let found = MonitorEvent(
            device: "C0:FF:EE:00:00:01", kind: .device(name: evil, rssi: -50, services: [], connected: false))
        #expect(
            lines.render(found)?.contains("found C0:FF:EE:00:00:01 Evil\\e]0;pwned\\a\\nFAKE LINE -50 dBm")
                == true)

        var live = LiveRenderer(colour: false)
        let scrolled = live.render(status) ?? ""
        #expect(scrolled == "-- disconnected: le-connection\\e[2J\\r\\nFAKE; retrying\n")
        let long = live.render(
            MonitorEvent(
                device: nil, kind: .status(.disconnected, detail: String(repeating: "x", count: 5000))))
        #expect(
            long == "-- disconnected: " + String(repeating: "x", count: TerminalText.messageLimit) + "…\n")
    }

    /// JSON keeps the exact name: only text for people is sanitised.
    @Test func jsonKeepsTheExactText() {
        let evil = "Evil\u{1B}]0;pwned\u{07}\nFAKE LINE"
        let line = MonitorEventJSON.line(
            MonitorEvent(
                time: Timestamp(millisecondsSinceEpoch: 0), device: "C0:FF:EE:00:00:01",
                kind: .device(name: evil, rssi: -50, services: ["180d"], connected: false)))
        #expect(line.contains(#""name":"Evil\u001b]0;pwned\u0007\nFAKE LINE""#))
    }
}

/// `decode`'s echo of a line that is not hex: a window around the bad column, escaped, the caret
/// under the right character.
@Suite struct HexEchoTests {
    @Test func shortLinesAreShownWhole() {
        let error = HexPayload.ParseError(column: 5, reason: "x")
        #expect(error.pointing(into: "06 4g") == "  06 4g\n      ^")
    }

    @Test func longLinesAreShownAroundTheColumn() throws {
        let text = String(repeating: "ab", count: 1_000_000) + "g" + String(repeating: "cd", count: 1000)
        let error = try #require(throws: HexPayload.ParseError.self) { try HexPayload.parse(text) }
        #expect(error.column == 2_000_001)
        let shown = error.pointing(into: text)
        let lines = shown.split(separator: "\n")
        try #require(lines.count == 2)
        #expect(
            lines[0] == "  …" + String(repeating: "ab", count: 20) + "g" + String(repeating: "cd", count: 20)
                + "…")
        #expect(lines[1] == "  " + String(repeating: " ", count: 41) + "^")
        #expect(shown.utf8.count < 200)
    }

    @Test func theCaretStaysUnderTheBadCharacterWhenControlsAreEscaped() throws {
        let text = "0\u{1B}[2J\u{07}"
        let error = try #require(throws: HexPayload.ParseError.self) { try HexPayload.parse(text) }
        #expect(error.column == 2)
        #expect(error.pointing(into: text) == "  0\\e[2J\\a\n   ^")
        let later = HexPayload.ParseError(column: 6, reason: "x")
        #expect(later.pointing(into: "\u{1B}\u{1B}ab g") == "  \\e\\eab g\n         ^")
    }
}
