import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Results go to stdout through a `LineWriter`; diagnostics go to stderr, unbuffered.
///
/// A closed pipe (`hrm ... | head -3`) is not an error worth a message: SIGPIPE is ignored and
/// the failed write ends the process quietly with status 0.
enum StandardOutput {
    /// Call once at start-up, before anything is written.
    static func prepare() {
        signal(SIGPIPE, SIG_IGN)
        // A file-size limit (ulimit -f) reached by a recording: the write fails with EFBIG and is
        // reported, instead of the signal ending hrm.
        signal(SIGXFSZ, SIG_IGN)
    }

    /// One diagnostic on stderr: a line, or the few lines hrm joined with "\n" (a hint, a caret).
    ///
    /// Callers sanitise the outside text they embed (`TerminalText`: escaped, line breaks
    /// included, and capped). As a second line of defence every line is escaped here too, so that
    /// no control character reaches the terminal through a message whose caller forgot; what is
    /// already sanitised passes unchanged.
    static func diagnostic(_ text: String) {
        let line = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { TerminalText.sanitised(String($0), limit: .max) }
            .joined(separator: "\n")
        // A live line or table on the terminal is taken off first and drawn again after.
        if let display = LiveDisplay.shared.withLock({ $0 }) {
            display.interleave(line)
        } else {
            writeDiagnostic(line)
        }
    }

    /// `line` and a newline on stderr, as it is (callers have sanitised it).
    static func writeDiagnostic(_ line: String) {
        var line = line + "\n"
        line.withUTF8 { buffer in _ = writeAll(STDERR_FILENO, buffer) }
    }

    /// True when stdout is a terminal.
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// A terminal that can redraw in place: live lines and tables. Not `TERM=dumb` (Emacs'
    /// shell buffers, some CI logs), which gets lines and no escape codes at all.
    static var isLiveTerminal: Bool {
        isTerminal && (getenv("TERM").map { String(cString: $0) != "dumb" } ?? true)
    }

    /// An environment variable set to something (NO_COLOR's rule: present and not empty).
    static func environmentSet(_ name: String) -> Bool {
        guard let value = getenv(name) else { return false }
        return value.pointee != 0
    }

    /// Writes every byte, retrying short writes and EINTR. Returns 0, or the errno of the write
    /// that failed.
    @discardableResult
    static func writeAll(_ fd: Int32, _ buffer: UnsafeBufferPointer<UInt8>) -> Int32 {
        Descriptor.writeAll(fd, buffer)
    }

    /// Ends hrm after a write to stdout failed with `code`: quietly for a closed pipe, else with
    /// the reason in words. A closed stdout (`>&-`) shows as EBADF, or as EINVAL when the runtime
    /// has since opened something of its own (an epoll) as descriptor 1.
    static func exitAfterWriteFailure(_ code: Int32) -> Never {
        if code == EPIPE { exit(0) }
        let hint =
            code == EBADF || code == EINVAL
            ? "\n  hint: is standard output closed (>&-)? To discard the output, send it to /dev/null" : ""
        // Straight to stderr: through a live display it would queue behind the stdout that failed.
        writeDiagnostic("hrm: cannot write to standard output: \(Errno.text(code))\(hint)")
        exit(74)  // EX_IOERR
    }
}

extension StandardOutput {
    /// `line` on stderr when standard input is a terminal: a command about to wait for what a
    /// person types says so, rather than sitting silent. Nothing when input comes from a pipe.
    static func hintWhenTyped(_ line: String) {
        if isatty(STDIN_FILENO) == 1 { diagnostic(line) }
    }
}

/// Buffers stdout lines and writes them in large blocks, or at once when asked to (live output).
final class LineWriter {
    private var buffer: [UInt8] = []
    private let limit: Int
    private let fd: Int32
    private let exitWhenClosed: Bool
    /// The reader went away (EPIPE); later output is dropped. Only without `exitWhenClosed`.
    private(set) var closed = false

    /// `exitWhenClosed: false` lets a command that holds resources (watch: a connection, a
    /// notify session) notice `closed` and release them before it exits.
    init(fd: Int32 = STDOUT_FILENO, limit: Int = 64 * 1024, exitWhenClosed: Bool = true) {
        self.fd = fd
        self.limit = limit
        self.exitWhenClosed = exitWhenClosed
        buffer.reserveCapacity(limit)
    }

    deinit { flush() }

    /// Appends one line; `flush` pushes it out at once (live output into a pipe).
    func line(_ text: String, flush: Bool = false) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        buffer.append(0x0A)
        if flush || buffer.count >= limit { self.flush() }
    }

    /// Writes text as it is (no newline added), at once: a live line redrawn in place.
    func raw(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        flush()
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        guard !closed else { return buffer.removeAll(keepingCapacity: true) }
        let failure = buffer.withUnsafeBufferPointer { StandardOutput.writeAll(fd, $0) }
        buffer.removeAll(keepingCapacity: true)
        guard failure != 0 else { return }
        if failure == EPIPE && !exitWhenClosed {
            closed = true
        } else {
            StandardOutput.exitAfterWriteFailure(failure)
        }
    }
}
