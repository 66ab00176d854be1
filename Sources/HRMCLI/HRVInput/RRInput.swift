import ArgumentParser
import InputFiles
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

/// A line that cannot be read, named by its source and number: `hrm hrv` exits 65 (EX_DATAERR).
struct RRInputError: Error, Equatable, CustomStringConvertible {
    /// The file as given on the command line, or `standard input`.
    let source: String
    /// From 1.
    let line: Int
    let message: String
    var description: String { "\(source), line \(line): \(message)" }
}

/// `hrm hrv`'s input: RR intervals in runs (`RRSeries`). A run ends at a gap (the link dropped)
/// and at the end of each source, so no successive difference spans either.
enum RRInput {
    /// The runs in `text`, in order (empty runs dropped). Throws at the first line that cannot
    /// be read: nothing of a source is taken unless all of it can be.
    static func runs(in text: String, source: String) throws(RRInputError) -> [[Double]] {
        var warnings: [String] = []
        return try runs(in: text, source: source, warnings: &warnings)
    }

    /// As `runs(in:source:)`; a recording's torn last line (a crash while it was written) adds a
    /// warning to `warnings` instead of failing.
    static func runs(in text: String, source: String, warnings: inout [String]) throws(RRInputError)
        -> [[Double]]
    {
        var series = RRSeries()
        try gather(text, source: source, into: &series, warnings: &warnings)
        return series.all.runs
    }

    /// Adds the lines of `text` to `series`, all together and per strap, and ends its runs: the
    /// end of a source is the end of a run. Nothing is added unless all of `text` can be read.
    /// `rrSource` says which JSON lines give the RR intervals (the strap's measurements, or the
    /// `ecg_beat` lines of R peaks found in the ECG).
    static func gather(
        _ text: String, source: String, into series: inout RRSeries, warnings: inout [String],
        rrSource: HRVTracker.RRSource = .strap
    )
        throws(RRInputError)
    {
        var parser = RRLineParser(source: rrSource)
        var read = series
        var failure: RRInputError? = nil
        var text = text
        text.withUTF8 { buffer in
            let bytes = UnsafeRawBufferPointer(buffer)
            // Split on the byte: as Characters, "\r\n" is one grapheme and no "\n".
            let lines = Self.lines(of: bytes)
            // The last line with anything on it (a file ends with a newline, so its last piece is empty).
            let last = lines.lastIndex { !$0.isEmpty }
            for (index, range) in lines.enumerated() {
                let line = UnsafeRawBufferPointer(rebasing: bytes[range])
                // The lines hrm writes are read in place; any other line, or one with something to
                // tell, as text.
                if let fast = parser.readFast(line) {
                    read.add(fast)
                    continue
                }
                do throws(RRLineError) {
                    read.add(try parser.read(String(decoding: line, as: UTF8.self)))
                } catch {
                    let error = RRInputError(source: source, line: index + 1, message: error.message)
                    guard parser.recording, index == last else {
                        failure = error
                        return
                    }
                    warnings.append("\(error.description) (a torn last line, as a crash leaves it: ignored)")
                }
            }
        }
        if let failure { throw failure }
        read.endSource()
        series = read
    }

    /// Every line of `bytes` (empty ones too), split at each newline byte: a text that ends with a
    /// newline ends with an empty line.
    static func lines(of bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        var lines: [Range<Int>] = []
        guard let base = bytes.baseAddress else { return [0..<0] }
        var start = 0
        while true {
            guard let found = memchr(base + start, 0x0A, bytes.count - start) else {
                lines.append(start..<bytes.count)
                return lines
            }
            let end = UnsafeRawPointer(found) - base
            lines.append(start..<end)
            start = end + 1
        }
    }

    /// The name a source has in messages: `-` is standard input.
    static func name(of path: String) -> String {
        path == "-" ? "standard input" : TerminalText.sanitised(path, limit: TerminalText.messageLimit)
    }

    /// The whole of `path` (`-`: standard input) as text, read by the one bounded line reader:
    /// a path must be a regular file (a FIFO or `/dev/zero` is refused, never waited on or read
    /// for ever), standard input may be anything (a pipe); a line longer than 64 KiB is an
    /// error, a torn end of NUL bytes is left out (`tornTailWarning`). An error that
    /// `isUnreadable` is exit 66 (EX_NOINPUT), any other 65 (EX_DATAERR).
    static func contents(of path: String) throws(InputError) -> TextInput {
        if path == "-" { return try TextInput.read(STDIN_FILENO, source: name(of: path)) }
        return try TextInput.file(path, source: name(of: path))
    }

    /// `contents(of:)` for `hrm COMMAND`: what cannot be read said on stderr and ended with 66
    /// (EX_NOINPUT), or 65 (EX_DATAERR) for a line too long; a torn end a warning.
    static func contents(of path: String, for command: String) throws(ExitCode) -> TextInput {
        let input: TextInput
        do {
            input = try contents(of: path)
        } catch {
            StandardOutput.diagnostic("hrm \(command): \(error)")
            throw ExitCode(error.isUnreadable ? 66 : 65)
        }
        if let warning = input.tornTailWarning {
            StandardOutput.diagnostic("hrm \(command): warning: \(warning)")
        }
        return input
    }
}
