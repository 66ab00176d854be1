#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The width of the terminal on stdout, in columns: 80 when it cannot be told. Asked at each
/// redraw (one ioctl), so that a resized window (SIGWINCH) is followed without a handler.
enum TerminalWidth {
    static func current() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
