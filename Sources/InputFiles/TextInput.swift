#if canImport(Glibc)
    import Glibc
#endif

/// The whole text of a file or a stream, read through `LineReader`: each line within its limit,
/// a torn end of NUL bytes left out (and told).
public struct TextInput: Sendable {
    /// The text before the torn end, as it was (newlines included).
    public let text: String
    /// How many lines it has.
    public let lines: Int
    /// Bytes of NULs (and newlines among them) at the end, left out; 0 for none.
    public let tornTail: Int
    /// The name of the file in messages.
    public let source: String
    /// The file read (nil for standard input): `hrm export` never writes over it.
    public let identity: FileIdentity?

    /// `ends in 4096 NUL bytes after line 12, ...: ignored`, or nil when it did not.
    public var tornTailNote: String? {
        guard tornTail > 0 else { return nil }
        return "ends in \(tornTail) NUL bytes after line \(lines), as a crash can leave a file: ignored"
    }

    /// `session.jsonl: ends in 4096 NUL bytes ...`, or nil when it did not.
    public var tornTailWarning: String? { tornTailNote.map { "\(source): \($0)" } }

    /// A regular file's text (anything else is refused: see `RegularFile`).
    public static func file(_ path: String, source: String) throws(InputError)
        -> TextInput
    {
        let descriptor = try RegularFile.open(path, source: source)
        defer { close(descriptor) }
        return try read(descriptor, source: source, identity: FileIdentity(descriptor: descriptor))
    }

    /// The text of `descriptor` to its end (standard input, a file already open).
    public static func read(_ descriptor: Int32, source: String, identity: FileIdentity? = nil)
        throws(InputError)
        -> TextInput
    {
        var reader = LineReader(descriptor: descriptor, source: source)
        var bytes: [UInt8] = []
        // A regular file's size is known: one allocation instead of the array growing by doubling
        // (capped: a sparse file's size may be anything; its torn end is not kept anyway).
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 {
            bytes.reserveCapacity(Int(min(Int64(status.st_size), 256 << 20)) + 1)
        }
        while let line = try reader.next() {
            bytes += line
            if reader.lastLineTerminated { bytes.append(UInt8(ascii: "\n")) }
        }
        return TextInput(
            text: String(decoding: bytes, as: UTF8.self), lines: reader.lineNumber, tornTail: reader.tornTail,
            source: source, identity: identity)
    }
}
