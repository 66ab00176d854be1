/// `hrm team`'s table: a row per strap on every host (host, name, BPM, zone, state, age of the
/// last sample), and the line per measurement it prints into a pipe.
enum TeamRendering {
    static let header = ["HOST", "NAME", "BPM", "ZONE", "STATE", "AGE"]

    /// The table's lines, each cut to `width - 1` columns.
    static func table(_ board: TeamBoard, now: Int64, width: Int) -> [String] {
        let cells = board.rows.map { row -> [String] in
            let offline = !board.online(row.host)
            return [
                shown(row.host), shown(row.name ?? row.address ?? row.device),
                row.bpm.map(String.init) ?? "--", row.zone.map(String.init) ?? "",
                offline ? "host offline" : shown(row.state ?? "?"),
                row.lastSample.map { age(now - $0) } ?? "",
            ]
        }
        let all = [header] + cells
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { cells in
            let line = cells.indices.map { column in
                column == cells.count - 1
                    ? cells[column]
                    : cells[column] + String(repeating: " ", count: widths[column] - cells[column].count)
            }.joined(separator: "  ")
            return line.count < width ? line : String(line.prefix(max(width - 1, 0)))
        }
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
