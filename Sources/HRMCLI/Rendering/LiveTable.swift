import HeartRate
import Monitor
import Outputs
import SessionLibrary

/// On a terminal, with several straps: lines scroll above a table with a row per strap (name,
/// BPM, zone, the latest RR intervals, battery, state), each row redrawn in place when its strap
/// says something. Rows never wrap: cells that do not fit the terminal's width are left off, so a
/// redraw always lands on the row it means.
struct LiveTableRenderer: EventRenderer {
    struct Row: Equatable {
        var device: String
        var name: String? = nil
        var bpm: Int? = nil
        var zone: Int? = nil
        var rr: [Int] = []
        var battery: Int? = nil
        var state = "connecting"
        var contactLost = false
    }

    let colour: Bool
    /// The terminal's width when it is asked for (each draw: a resized window is followed).
    let width: () -> Int
    /// The terminal rewraps lines when its window narrows (`TerminalReflow`).
    let reflows: Bool
    private(set) var rows: [Row] = []
    /// The display columns of each line of the live region on the screen now, top first (the
    /// cursor is at the end of the last).
    private var drawnColumns: [Int] = []
    /// Lines of the live region on the screen now.
    private var drawn: Int { drawnColumns.count }
    /// The session's own status (`-- scanning`) while no strap has a row yet: the region's one
    /// line, not scrolled, so that it cannot linger above the table once straps are found.
    private var waiting: String? = nil
    /// The session stopped: the table was left as it ended, and nothing is drawn again.
    private var ended = false

    init(colour: Bool, width: @escaping () -> Int = TerminalWidth.current, reflows: Bool = false) {
        self.colour = colour
        self.width = width
        self.reflows = reflows
    }

    mutating func render(_ event: MonitorEvent) -> String? {
        switch event.kind {
        case .measurement(let m, let zone):
            return update(event.device) {
                $0.bpm = Int(m.heartRate)
                $0.zone = zone
                $0.rr = m.rrIntervals.map { Int($0.milliseconds.rounded()) }
                $0.contactLost = m.sensorContact == .notDetected
                $0.state = "connected"
            }
        case .battery(let percent):
            return update(event.device) { $0.battery = percent }
        case .info(let name, _, let battery, _, _, _):
            return update(event.device) {
                $0.name = name
                $0.battery = battery ?? $0.battery
            }
        case .status(let state, let detail):
            let line = "-- \(WatchText.status(state, detail))"
            guard let device = event.device else {
                if state == .stopped { return stop(paint(line, "2")) }
                // Looking for straps: shown while there is no table, never above one (a strap
                // missing from several is looked for in the background, and its row says so).
                waiting = line
                return rows.isEmpty && !ended ? redrawAll() : nil
            }
            return update(device) {
                $0.state = state.rawValue
                if state != .connected {
                    // No heart rate, so no zone either: `♥ --  zone 4` reads as a reading.
                    $0.bpm = nil
                    $0.zone = nil
                    $0.rr = []
                }
            }
        case .alert(let alert):
            let who = event.device.map { " " + name(of: $0) } ?? ""
            return "\u{07}" + scroll(paint("!!\(who) \(WatchText.alert(alert))", "33"))
        case .summary(let report):
            let who = event.device.map { " for " + name(of: $0) } ?? ""
            let lines = WatchText.summary(report, lead: "-- summary\(who): ", width: width())
            return scroll(lines.map { paint($0, "2") }.joined(separator: "\n"))
        case .relay(let state, let consumer):
            return scroll(paint("-- \(WatchText.relay(state, consumer))", "2"))
        case .hrv, .device, .error, .ecg, .acc, .ecgBeat:
            return nil
        }
    }

    mutating func finish() -> String? {
        drawn > 0 ? "\n" : nil
    }

    mutating func suspend() -> String? {
        drawn > 0 ? clear() : nil
    }

    mutating func resume() -> String? {
        ended || regionLines(width: 0).isEmpty ? nil : redrawAll(fromTop: true)
    }

    /// The session's end: every row marked stopped and left where it is (not drawn again below
    /// the last line), then the final status under it.
    private mutating func stop(_ line: String) -> String {
        for index in rows.indices { rows[index].state = MonitorEvent.State.stopped.rawValue }
        let table = rows.isEmpty ? "" : redrawAll()
        let below = drawn > 0 ? "\n" : ""
        drawnColumns = []
        ended = true
        return table + below + line + "\n"
    }

    private func name(of device: String) -> String {
        rows.first { $0.device == device }?.name.map(Self.shown) ?? device
    }

    /// Changes a strap's row (a new strap gets a row at the bottom) and redraws that row.
    private mutating func update(_ device: String?, _ change: (inout Row) -> Void) -> String? {
        guard let device, !ended else { return nil }
        guard let index = rows.firstIndex(where: { $0.device == device }) else {
            var row = Row(device: device)
            change(&row)
            rows.append(row)
            return redrawAll()
        }
        let before = rows[index]
        change(&rows[index])
        guard rows[index] != before else { return nil }
        guard drawn == rows.count else { return redrawAll() }
        let now = width()
        // Rows rewrapped by a narrower window: their places are no longer one row each.
        if reflows, rowsAbove(width: now) != nil { return redrawAll(width: now) }
        // Up to the row, rewrite it, back down to the last row.
        let up = drawn - 1 - index
        let (text, columns) = line(of: rows[index], width: now)
        drawnColumns[index] = columns
        let redrawn = "\r\u{1B}[2K" + text
        guard up > 0 else { return redrawn }
        // Where a terminal may rewrap, the cursor goes back to the end of the last row, where
        // `rowsAbove` counts from.
        let last = drawnColumns[drawn - 1]
        let end = reflows ? "\r" + (last > 0 ? "\u{1B}[\(last)C" : "") : ""
        return "\u{1B}[\(up)A" + redrawn + "\u{1B}[\(up)B" + end
    }

    /// A line above the table, which is then drawn again below it.
    private mutating func scroll(_ line: String) -> String {
        if ended { return line + "\n" }
        return clear() + line + "\n" + redrawAll(fromTop: true)
    }

    /// To the start of the table's first row, and everything from there erased. `now`: the
    /// width, when the caller has just asked. Where the terminal reflows, row by row (all the
    /// rows a narrower window rewrapped the lines into): tmux, the usual one of those, keeps a
    /// screen erased from its top-left corner (`\e[J` there) in its history, and a table at the
    /// top of a fresh pane would leave its `-- scanning` line and a first row there.
    private mutating func clear(width now: Int? = nil) -> String {
        defer { drawnColumns = [] }
        guard drawn > 0 else { return "" }
        if reflows { return TerminalReflow.erase(rowsAbove: rowsAbove(width: now ?? width()) ?? drawn - 1) }
        return (drawn > 1 ? "\u{1B}[\(drawn - 1)A" : "") + "\r\u{1B}[J"
    }

    /// After the window narrowed, on a terminal that reflows: the rows above the cursor's that
    /// the region takes now, each line of it rewrapped at `width`; nil when no line was (each
    /// still takes one row).
    private func rowsAbove(width: Int) -> Int? {
        guard let last = drawnColumns.last, drawnColumns.contains(where: { $0 > width }) else { return nil }
        return drawnColumns.dropLast().map { TerminalReflow.rows(columns: $0, width: width) }.reduce(0, +)
            + TerminalReflow.rowsAbove(columns: last, width: width)
    }

    private mutating func redrawAll(fromTop: Bool = false, width now: Int? = nil) -> String {
        let now = now ?? width()
        let start = fromTop ? "" : clear(width: now)
        let lines = regionLines(width: now)
        drawnColumns = lines.map(\.columns)
        return start + lines.map { "\r\u{1B}[2K" + $0.text }.joined(separator: "\n")
    }

    /// The live region: a row per strap, or the session's status while there is none.
    private func regionLines(width: Int) -> [(text: String, columns: Int)] {
        guard rows.isEmpty else { return rows.map { line(of: $0, width: width) } }
        // Cut to the width, as rows are: a wrapped line would throw the redraws off by a row.
        return waiting.map { waiting in
            let cut = TerminalText.cut(waiting, columns: max(width - 1, 1))
            return [(paint(cut, "2"), TerminalText.columns(cut))]
        } ?? []
    }

    /// The row's cells, as many as fit in `width - 1` columns (the last column left free: some
    /// terminals wrap when it is written), and the display columns they take.
    func line(of row: Row, width: Int) -> (text: String, columns: Int) {
        let name = row.name.map(Self.shown) ?? row.device
        var cells: [(plain: String, code: String?)] = [
            (TerminalText.padded(TerminalText.cut(name, columns: 20), columns: 20), nil),
            (
                TerminalText.padded(row.bpm.map { "♥ \($0)" } ?? "♥ --", columns: 6),
                LiveRenderer.zoneColour(row.zone)
            ),
        ]
        if let zone = row.zone { cells.append(("zone \(zone)", nil)) }
        if row.contactLost { cells.append(("no contact", "33")) }
        cells.append((TerminalText.padded(row.state, columns: 12), row.state == "connected" ? nil : "33"))
        if let battery = row.battery { cells.append(("battery \(battery) %", nil)) }
        if !row.rr.isEmpty {
            cells.append(("RR " + row.rr.map(String.init).joined(separator: " ") + " ms", nil))
        }
        var used = 0
        var shown: [String] = []
        for cell in cells {
            let needed = TerminalText.columns(cell.plain) + (shown.isEmpty ? 0 : 2)
            guard used + needed <= width - 1 else { break }
            used += needed
            shown.append(paint(cell.plain, cell.code))
        }
        return (shown.joined(separator: "  "), used)
    }

    private func paint(_ text: String, _ code: String?) -> String {
        guard colour, let code else { return text }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    private static func shown(_ name: String) -> String {
        TerminalText.sanitised(name, limit: TerminalText.nameLimit)
    }
}
