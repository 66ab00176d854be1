#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Whether the terminal on stdout rewraps ("reflows") its lines when its window gets narrower,
/// and what that does to a live display.
///
/// Why it matters: the live line (and the several-strap table) is redrawn in place, `\r` and an
/// erase of the row. A terminal that reflows turns a line wider than the new width into several
/// rows, and the erase then reaches only the last of them: the rows above stay on the screen as a
/// broken copy unless hrm goes up over them first. A terminal that truncates instead keeps one row
/// per line, and going up there would erase a line of real output (an event above the live line).
/// No escape sequence asks a terminal which it does, so the environment terminals set is read:
///
/// - reflow: tmux (`TMUX`, `TERM=tmux*`), GNU screen (`STY`, `TERM=screen*`), VTE terminals such
///   as GNOME Terminal (`VTE_VERSION`), kitty (`KITTY_WINDOW_ID`, `TERM=xterm-kitty`), Konsole
///   (`KONSOLE_VERSION`), Windows Terminal (`WT_SESSION`), foot (`TERM=foot*`), Alacritty
///   (`ALACRITTY_WINDOW_ID`, `TERM=alacritty`), Ghostty (`TERM=xterm-ghostty`), and those that say
///   `TERM_PROGRAM` iTerm.app, WezTerm, vscode, Apple_Terminal, ghostty or tmux;
/// - anything else (xterm, the Linux console, a terminal reached over ssh, which passes on only
///   `TERM`) is taken not to reflow: a broken copy left is a lesser harm than a line lost.
///
/// A multiplexer is the terminal hrm writes to, whatever runs it, so `TMUX` and `STY` are asked
/// first. `HRM_REFLOW=yes` or `no` says it where the guess is wrong.
enum TerminalReflow {
    /// The terminal of this process's environment.
    static var current: Bool {
        reflows { name in getenv(name).map { String(cString: $0) } }
    }

    /// Whether the terminal reflows, by the environment `variable` reads (nil: not set).
    static func reflows(_ variable: (String) -> String?) -> Bool {
        func set(_ name: String) -> Bool { !(variable(name) ?? "").isEmpty }
        switch variable("HRM_REFLOW")?.lowercased() {
        case "yes", "1", "true", "on": return true
        case "no", "0", "false", "off": return false
        default: break
        }
        if set("TMUX") || set("STY") { return true }
        let term = variable("TERM") ?? ""
        let terms = ["tmux", "screen", "foot", "xterm-kitty", "alacritty", "xterm-ghostty"]
        if terms.contains(where: { term == $0 || term.hasPrefix($0 + "-") || term.hasPrefix($0 + ".") }) {
            return true
        }
        let programs: Set = ["iTerm.app", "WezTerm", "vscode", "Apple_Terminal", "ghostty", "tmux"]
        if let program = variable("TERM_PROGRAM"), programs.contains(program) { return true }
        return ["VTE_VERSION", "KITTY_WINDOW_ID", "KONSOLE_VERSION", "WT_SESSION", "ALACRITTY_WINDOW_ID"]
            .contains(where: set)
    }

    /// Rows above the cursor's that a line of `columns` display columns, drawn with the cursor at
    /// its end, takes once rewrapped at `width`: ceil(columns / width) - 1, none when it fits.
    /// A line of exactly k widths is counted as k rows (tmux leaves the cursor at the end of its
    /// last row; a terminal that moves it to the next row then keeps one broken row, rather than
    /// hrm erasing a real line above).
    static func rowsAbove(columns: Int, width: Int) -> Int {
        guard columns > width, width > 0 else { return 0 }
        return (columns - 1) / width
    }

    /// Rows a finished line (one followed by a newline) of `columns` display columns takes once
    /// rewrapped at `width`: an empty line takes one.
    static func rows(columns: Int, width: Int) -> Int {
        rowsAbove(columns: columns, width: width) + 1
    }

    /// Takes `rowsAbove` rows above the cursor's and the cursor's own off the screen, bottom up,
    /// and leaves the cursor at the start of the highest. Row by row rather than up and `\e[J`:
    /// tmux keeps a screen erased from its top-left corner in its history, where the broken copy
    /// would stay.
    static func erase(rowsAbove: Int) -> String {
        "\r\u{1B}[2K" + String(repeating: "\u{1B}[1A\u{1B}[2K", count: max(rowsAbove, 0))
    }
}
