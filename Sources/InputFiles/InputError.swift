#if canImport(Glibc)
    import Glibc
#endif

/// Why a file hrm or hrm-sim did not write cannot be read, or read to the end, as text.
public struct InputError: Error, Equatable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// `open` or `read` failed with this errno (a missing file, no permission, an I/O error).
        case system(Int32)
        /// Not a regular file: a directory, a FIFO, a device, a socket (what it is, in words).
        case notRegular(String)
        /// A line longer than `LineReader.lineLimit` bytes (the line's number, from 1).
        case lineTooLong(line: Int)
        /// NUL bytes with text after them: not the torn end a crash leaves (the line's number).
        case nulBytesInside(line: Int)
    }

    /// The file as messages name it (sanitised by the caller where it prints).
    public let source: String
    public let reason: Reason

    public init(source: String, reason: Reason) {
        self.source = source
        self.reason = reason
    }

    /// Whether the file could not be opened or read at all (exit 66), rather than read and found
    /// not to be text of the kind wanted (exit 65).
    public var isUnreadable: Bool {
        switch reason {
        case .system, .notRegular: true
        case .lineTooLong, .nulBytesInside: false
        }
    }

    public var description: String {
        switch reason {
        case .system(let code): "cannot read \(source): \(Self.text(code))"
        case .notRegular(let what): "cannot read \(source): not a regular file (\(what))"
        case .lineTooLong(let line):
            "\(source), line \(line): longer than \(LineReader.lineLimit / 1024) KiB, not a line of text"
        case .nulBytesInside(let line):
            "\(source), line \(line): NUL bytes amid the text (not a text file, or damaged)"
        }
    }

    /// `No such file or directory`: strerror's text for an errno.
    static func text(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}
