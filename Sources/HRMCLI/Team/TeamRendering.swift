import Monitor
import Outputs
import SessionLibrary

/// `hrm team`'s table: a row per strap on every host (host, name, BPM, zone, state, age of the
/// last sample), and the line per measurement it prints into a pipe.
enum TeamRendering {
    static let header = ["HOST", "NAME", "BPM", "ZONE", "STATE", "AGE"]

    /// The table's lines, each cut to `width - 1` columns, and at most `height - 1` of them (the
    /// cursor's line stays free, so the terminal never scrolls): when the straps do not fit, those
    /// that sent a measurement come first, and a last line says how many more there are.
    /// A host offline for `forgetAfter` milliseconds is left out (`TeamBoard.shown`).
    static func table(
        _ board: TeamBoard, now: Int64, width: Int, height: Int = .max, forgetAfter: Int64 = .max
    ) -> [String] {
        let room = max(height - 1, 2)
        let all = board.shown(at: now, forgetAfter: forgetAfter)
        var rows = all
        var more = 0
        if rows.count + 1 > room {
            let sampled = rows.filter { $0.lastSample != nil }
            rows = Array((sampled + rows.filter { $0.lastSample == nil }).prefix(room - 2))
            more = all.count - rows.count
        }
        let cells = rows.map { row -> [String] in
            let offline = !board.online(row.host)
            return [
                shown(row.host), shown(row.name ?? row.address ?? row.device),
                row.bpm.map(String.init) ?? "--", row.zone.map(String.init) ?? "",
                offline ? "host offline" : shown(row.state ?? "?"),
                row.lastSample.map { age(now - $0) } ?? "",
            ]
        }
        let table = [header] + cells
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        var lines = table.map { cells in
            cells.indices.map { column in
                column == cells.count - 1
                    ? cells[column]
                    : cells[column] + String(repeating: " ", count: widths[column] - cells[column].count)
            }.joined(separator: "  ")
        }
        if more > 0 { lines.append("… and \(more) more strap\(more == 1 ? "" : "s")") }
        return lines.map { $0.count < width ? $0 : String($0.prefix(max(width - 1, 0))) }
    }

    /// `3 s`, `2 min`, `1 h`: how long ago the last sample came.
    static func age(_ milliseconds: Int64) -> String {
        let seconds = max(milliseconds, 0) / 1000
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 7200 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h"
    }

    /// A line per measurement into a pipe: `12:01:02  pi-kitchen  Polar H10  134 bpm  zone 3`.
    static func line(_ row: TeamBoard.Row, clock: String) -> String {
        "\(clock)  \(shown(row.host))  \(shown(row.name ?? row.address ?? row.device))  \(row.bpm.map(String.init) ?? "--") bpm"
            + (row.zone.map { "  zone \($0)" } ?? "")
    }

    /// Host and strap names come from the network: escaped and capped before a terminal sees them.
    private static func shown(_ text: String) -> String {
        TerminalText.sanitised(text, limit: TerminalText.nameLimit)
    }
}
