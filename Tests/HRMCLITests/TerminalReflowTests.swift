import HeartRate
import Testing

@testable import HRMCLI
@testable import Monitor

/// A narrowed window on a terminal that rewraps its lines: the live line and the live table go up
/// over every row their old lines were rewrapped into, and only there (#26 item 6). The width is
/// injected; `ResizeBinaryTests` runs the same against a real tmux.
@Suite struct TerminalReflowTests {
    /// A width the test changes between draws, as a resized window does.
    final class Width {
        var columns: Int
        init(_ columns: Int) { self.columns = columns }
    }

    static func measurement(_ device: String = "D2:4B:7E:10:20:30", bpm: UInt8 = 72) -> MonitorEvent {
        // Contact detected, two RR intervals.
        MonitorEvent.decoding([0x16, bpm, 0x4D, 0x03, 0x20, 0x03], device: device)
    }

    /// The visible text of a render: escapes and the carriage return taken out.
    static func visible(_ text: String) -> String {
        var result = ""
        var escape = false
        for scalar in text.unicodeScalars {
            if escape {
                if scalar.properties.isAlphabetic { escape = false }
            } else if scalar == "\u{1B}" {
                escape = true
            } else if scalar != "\r" {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    @Test(arguments: [
        ([:], false),
        (["TERM": "xterm-256color"], false),
        (["TERM": "linux"], false),
        (["TERM": "xterm-256color", "TMUX": "/tmp/tmux-1000/default,123,0"], true),
        (["TERM": "tmux-256color"], true),
        (["TERM": "screen"], true),
        (["TERM": "screen.xterm-256color"], true),
        (["TERM": "xterm", "STY": "123.pts-0.host"], true),
        (["TERM": "xterm-256color", "VTE_VERSION": "7600"], true),
        (["TERM": "xterm-kitty"], true),
        (["TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"], true),
        (["TERM": "foot"], true),
        (["TERM": "foot-extra"], true),
        (["TERM": "xterm-256color", "KONSOLE_VERSION": "230805"], true),
        (["TERM": "xterm-256color", "WT_SESSION": "0b6c"], true),
        (["TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"], true),
        (["TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"], true),
        (["TERM": "xterm-256color", "TERM_PROGRAM": "vscode"], true),
        (["TERM": "xterm-256color", "TERM_PROGRAM": "Apple_Terminal"], true),
        (["TERM": "xterm-256color", "TERM_PROGRAM": "someterm"], false),
        (["TERM": "xterm-256color", "VTE_VERSION": ""], false),
        // The override, both ways, whatever the guess.
        (["TERM": "xterm", "HRM_REFLOW": "yes"], true),
        (["TERM": "tmux-256color", "TMUX": "x", "HRM_REFLOW": "no"], false),
        (["TERM": "tmux-256color", "HRM_REFLOW": "maybe"], true),
    ])
    func reflowIsToldFromTheEnvironment(environment: [String: String], reflows: Bool) {
        #expect(TerminalReflow.reflows { environment[$0] } == reflows, "\(environment)")
    }

    /// ceil(columns / width) - 1 rows above the cursor's once rewrapped; none when it fits.
    @Test func rowsAboveTheCursor() {
        #expect(TerminalReflow.rowsAbove(columns: 39, width: 40) == 0)
        #expect(TerminalReflow.rowsAbove(columns: 40, width: 40) == 0)
        #expect(TerminalReflow.rowsAbove(columns: 41, width: 40) == 1)
        #expect(TerminalReflow.rowsAbove(columns: 80, width: 40) == 1)
        #expect(TerminalReflow.rowsAbove(columns: 81, width: 40) == 2)
        #expect(TerminalReflow.rowsAbove(columns: 99, width: 20) == 4)
        #expect(TerminalReflow.rowsAbove(columns: 0, width: 40) == 0)
        #expect(TerminalReflow.rowsAbove(columns: 50, width: 0) == 0, "no width told: nothing guessed")
        #expect(TerminalReflow.rows(columns: 0, width: 40) == 1, "an empty line is a row")
        #expect(TerminalReflow.erase(rowsAbove: 2) == "\r\u{1B}[2K\u{1B}[1A\u{1B}[2K\u{1B}[1A\u{1B}[2K")
    }

    /// Drawn at 100 columns, redrawn at 40: the old line's rows go, bottom up, then the new
    /// line, which fits in 39 columns. Widening again needs nothing more than the usual erase.
    @Test func theLiveLineGoesUpOverItsRewrappedRows() {
        let width = Width(100)
        var live = LiveRenderer(colour: false, width: { width.columns }, reflows: true)
        _ = live.render(MonitorEvent(device: "D2:4B:7E:10:20:30", kind: .battery(percent: 87)))
        let wide = live.render(Self.measurement()) ?? ""
        let columns = TerminalText.columns(Self.visible(wide))
        #expect(columns > 40 && columns <= 99, "\(wide.debugDescription)")
        width.columns = 40
        let narrow = live.render(Self.measurement(bpm: 73)) ?? ""
        let up = (columns - 1) / 40
        #expect(
            narrow.hasPrefix(TerminalReflow.erase(rowsAbove: up) + "♥ 73 bpm"), "\(narrow.debugDescription)")
        #expect(!narrow.hasPrefix(TerminalReflow.erase(rowsAbove: up + 1)), "never a row more")
        #expect(TerminalText.columns(Self.visible(narrow)) <= 39)
        width.columns = 100
        let again = live.render(Self.measurement(bpm: 74)) ?? ""
        #expect(again.hasPrefix("\r\u{1B}[2K♥ 74 bpm"), "\(again.debugDescription)")
        // A line scrolled above after a narrowing clears the rewrapped rows first too.
        width.columns = 30
        let status = live.render(MonitorEvent(device: nil, kind: .status(.reconnecting, detail: nil))) ?? ""
        #expect(
            status.hasPrefix(TerminalReflow.erase(rowsAbove: 1) + "-- reconnecting"),
            "\(status.debugDescription)")
    }

    /// A terminal not known to reflow gets what it always had: one row erased, never a move up
    /// over a line of output it kept.
    @Test func noMoveUpWhereTheTerminalTruncates() {
        let width = Width(100)
        var live = LiveRenderer(colour: false, width: { width.columns }, reflows: false)
        _ = live.render(MonitorEvent(device: "D2:4B:7E:10:20:30", kind: .battery(percent: 87)))
        _ = live.render(Self.measurement())
        width.columns = 40
        let narrow = live.render(Self.measurement(bpm: 73)) ?? ""
        #expect(narrow.hasPrefix("\r\u{1B}[2K♥ 73 bpm") && !narrow.contains("\u{1B}[1A"))
    }

    /// The live line never takes the last column, whatever the width (the BPM alone is cut in a
    /// window narrower than it).
    @Test func theLiveLineLeavesTheLastColumnFree() {
        for columns in [3, 5, 8, 9, 10, 15, 33, 47, 80] {
            var live = LiveRenderer(colour: false, width: { columns }, reflows: true)
            _ = live.render(MonitorEvent(device: "D2:4B:7E:10:20:30", kind: .battery(percent: 87)))
            let line = Self.visible(live.render(Self.measurement()) ?? "")
            #expect(TerminalText.columns(line) <= columns - 1, "\(columns): \(line)")
        }
    }

    /// Two rows of ~60 columns at 100, then 40 columns: each row was rewrapped into two, so the
    /// table goes up three rows (two for the first, one above the cursor's for the second) and
    /// is drawn again whole, each row within 39 columns.
    @Test func theTableGoesUpOverEveryRewrappedRow() throws {
        let width = Width(100)
        var table = LiveTableRenderer(colour: false, width: { width.columns }, reflows: true)
        _ = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 120))
        let both = table.render(Self.measurement("C0:FF:EE:00:00:02", bpm: 90)) ?? ""
        let rows = Self.visible(both).split(separator: "\n").map { TerminalText.columns(String($0)) }
        try #require(rows.count == 2 && rows.allSatisfy { $0 > 40 && $0 <= 80 }, "\(both.debugDescription)")
        width.columns = 40
        // One strap's new reading redraws the whole table, from its first rewrapped row.
        let narrow = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 121)) ?? ""
        let up =
            TerminalReflow.rows(columns: rows[0], width: 40)
            + TerminalReflow.rowsAbove(columns: rows[1], width: 40)
        #expect(up == 3)
        #expect(
            narrow.hasPrefix(TerminalReflow.erase(rowsAbove: up) + "\r\u{1B}[2K"),
            "\(narrow.debugDescription)")
        let redrawn = Self.visible(narrow).split(separator: "\n")
        try #require(redrawn.count == 2)
        #expect(redrawn[0].contains("♥ 121") && redrawn[1].contains("♥ 90"))
        #expect(redrawn.allSatisfy { TerminalText.columns(String($0)) <= 39 }, "\(redrawn)")
        // Now everything fits: a row is redrawn in place again, and the cursor goes back to the
        // end of the last row, where the next narrowing counts from.
        let update = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 122)) ?? ""
        #expect(update.hasPrefix("\u{1B}[1A\r\u{1B}[2K"), "\(update.debugDescription)")
        #expect(update.hasSuffix("\u{1B}[1B\r\u{1B}[\(TerminalText.columns(String(redrawn[1])))C"))
    }

    /// Without reflow the table's bytes are what they were: up to its first row, erase below.
    @Test func theTableOnATerminalThatTruncates() {
        let width = Width(100)
        var table = LiveTableRenderer(colour: false, width: { width.columns })
        _ = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 120))
        _ = table.render(Self.measurement("C0:FF:EE:00:00:02", bpm: 90))
        width.columns = 40
        let update = table.render(Self.measurement("C0:FF:EE:00:00:01", bpm: 121)) ?? ""
        #expect(update.hasPrefix("\u{1B}[1A\r\u{1B}[2K") && update.hasSuffix("\u{1B}[1B"))
        let alert =
            table.render(
                MonitorEvent(
                    device: nil, kind: .alert(HeartRateAlert(direction: .above, bpm: 121, bound: 120)))) ?? ""
        #expect(alert.hasPrefix("\u{07}\u{1B}[1A\r\u{1B}[J!!"), "\(alert.debugDescription)")
    }

    /// Display columns, not characters: a strap named in CJK takes two columns a character, and
    /// its row still fits.
    @Test func columnsAreDisplayColumns() {
        #expect(TerminalText.columns("♥ 72 bpm") == 8)
        #expect(TerminalText.columns("▁▂▃█") == 4)
        #expect(TerminalText.columns("心拍計") == 6)
        #expect(TerminalText.columns("e\u{301}") == 1)
        #expect(TerminalText.columns("❤️") == 2)
        #expect(TerminalText.cut("心拍計心拍計", columns: 6) == "心拍…")
        #expect(TerminalText.padded("心拍", columns: 6) == "心拍  ")
        let table = LiveTableRenderer(colour: false, width: { 40 })
        var row = LiveTableRenderer.Row(device: "C0:FF:EE:00:00:01")
        row.name = String(repeating: "心", count: 30)
        row.bpm = 150
        row.battery = 50
        for width in [20, 30, 40, 60, 100] {
            let line = table.line(of: row, width: width)
            #expect(line.columns == TerminalText.columns(line.text), "\(line)")
            #expect(line.columns <= width - 1, "\(width): \(line)")
        }
        #expect(table.line(of: row, width: 100).text.hasPrefix(String(repeating: "心", count: 9) + "… "))
    }
}
