#if canImport(Glibc)
    import Glibc
#endif

/// Reads lines of text from a descriptor with bounded memory, whatever the file holds: the one
/// line reader of hrm and hrm-sim (recordings, `hrm hrv`'s input, `hrm decode`'s standard input).
///
/// - A line longer than `lineLimit` is an error as soon as it is that long (a line of a
///   recording is at most a few kB; `/dev/zero` or a file without newlines would otherwise fill
///   the memory).
/// - NUL bytes to the end of a file are a torn end, not text: what a crash can leave on an SD
///   card (the file's size was saved, its last blocks were not). They are skipped without being
///   kept and counted in `tornTail`; the lines before them are read as usual. NUL bytes with text
///   after them are an error. On a pipe, where nothing says where the end is, a run of NULs
///   longer than `lineLimit` is a line too long.
public struct LineReader {
    /// The longest line read: 64 KiB, far above any line hrm writes.
    public static let lineLimit = 64 * 1024
    private static let chunkSize = 64 * 1024
    private static let newline = UInt8(ascii: "\n")

    private let descriptor: Int32
    private let source: String
    private let regular: Bool
    private var chunk: [UInt8]
    /// The unread bytes of `chunk`.
    private var start = 0
    private var end = 0
    private var endOfInput = false
    private var pending: [UInt8] = []
    private var inTornTail = false

    /// Lines returned so far.
    public private(set) var lineNumber = 0
    /// Whether the last line returned ended with a newline (a file's last line may not).
    public private(set) var lastLineTerminated = true
    /// Bytes of the torn end (NUL bytes, and newlines among them) skipped after the last line.
    public private(set) var tornTail = 0

    /// Reads from `descriptor` (which the caller owns and closes); `source` names it in errors.
    public init(descriptor: Int32, source: String) {
        self.descriptor = descriptor
        self.source = source
        var status = stat()
        regular = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
        chunk = [UInt8](repeating: 0, count: Self.chunkSize)
    }

    /// The next line without its newline, or nil at the end of the input.
    public mutating func next() throws(InputError) -> [UInt8]? {
        while true {
            if start == end {
                if endOfInput { return pending.isEmpty ? nil : take(terminated: false) }
                try fill()
                continue
            }
            if inTornTail {
                try skipTornTail()
                continue
            }
            let (newline, nul) = find()
            if let nul {
                try append(upTo: nul)
                inTornTail = true
                if !pending.isEmpty { return take(terminated: false) }
                continue
            }
            if let newline {
                try append(upTo: newline)
                start += 1
                return take(terminated: true)
            }
            try append(upTo: end)
        }
    }

    /// Where the next newline is in the unread bytes, and the first NUL before it (both indexes
    /// of `chunk`), by `memchr`: a 50 MB file is a few thousand calls, not 50 million steps.
    private func find() -> (newline: Int?, nul: Int?) {
        chunk.withUnsafeBytes { bytes -> (Int?, Int?) in
            guard let base = bytes.baseAddress else { return (nil, nil) }
            let newline = memchr(base + start, Int32(Self.newline), end - start).map {
                UnsafeRawPointer($0) - base
            }
            let nul = memchr(base + start, 0, (newline ?? end) - start).map { UnsafeRawPointer($0) - base }
            return (newline, nul)
        }
    }

    private mutating func append(upTo index: Int) throws(InputError) {
        guard pending.count + (index - start) <= Self.lineLimit else {
            throw InputError(source: source, reason: .lineTooLong(line: lineNumber + 1))
        }
        pending += chunk[start..<index]
        start = index
    }

    private mutating func take(terminated: Bool) -> [UInt8] {
        lineNumber += 1
        lastLineTerminated = terminated
        defer { pending = [] }
        return pending
    }

    /// Skips NULs (and newlines among them) in the unread bytes, eight at a time where it can.
    private mutating func skipTornTail() throws(InputError) {
        let skipped = chunk.withUnsafeBytes { bytes -> Int in
            var index = start
            while index + 8 <= end, bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) == 0 {
                index += 8
            }
            while index < end, bytes[index] == 0 || bytes[index] == Self.newline { index += 1 }
            return index - start
        }
        start += skipped
        tornTail += skipped
        if start < end, chunk[start] != 0, chunk[start] != Self.newline {
            throw InputError(source: source, reason: .nulBytesInside(line: lineNumber + 1))
        }
        if !regular, tornTail > Self.lineLimit {
            throw InputError(source: source, reason: .lineTooLong(line: lineNumber + 1))
        }
    }

    private mutating func fill() throws(InputError) {
        while true {
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, Self.chunkSize) }
            if got > 0 {
                start = 0
                end = got
                return
            }
            if got == 0 {
                endOfInput = true
                return
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                // A standard input someone left non-blocking: wait for it a second at a time.
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 1000)
                continue
            }
            throw InputError(source: source, reason: .system(code))
        }
    }
}
