import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The size of the terminal on stdout: 80 columns and 24 lines when it cannot be told. Asked at
/// each redraw (one ioctl), so that a resized window (SIGWINCH) is followed without a handler.
enum TerminalWidth {
    /// Columns.
    static func current() -> Int {
        size().columns
    }

    /// Columns and lines.
    static func size() -> (columns: Int, lines: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 else { return (80, 24) }
        return (size.ws_col > 0 ? Int(size.ws_col) : 80, size.ws_row > 0 ? Int(size.ws_row) : 24)
    }
}
