import Foundation
import InputFiles
import Testing

/// The shared bounded line reader on bytes whose every edge is known: line ends, the 64 KiB
/// limit, a torn end of NUL bytes, NULs with text after them.
@Suite struct LineReaderTests {
    /// The lines of `bytes` (a file), the torn tail's size, or the error.
    static func read(_ bytes: [UInt8]) throws -> (lines: [String], terminated: Bool, tail: Int) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hrm-lines-\(UUID())")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let descriptor = open(file.path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var reader = LineReader(descriptor: descriptor, source: "f")
        var lines: [String] = []
        while let line = try reader.next() { lines.append(String(decoding: line, as: UTF8.self)) }
        return (lines, reader.lastLineTerminated, reader.tornTail)
    }

    @Test func linesWithAndWithoutALastNewline() throws {
        #expect(try Self.read(Array("a\n\nb\r\n".utf8)) == (["a", "", "b\r"], true, 0))
        #expect(try Self.read(Array("a\nb".utf8)) == (["a", "b"], false, 0))
        #expect(try Self.read([]) == ([], true, 0))
    }

    @Test func aLineOfExactlyTheLimitIsReadAndOneMoreIsNot() throws {
        let limit = LineReader.lineLimit
        let exact = try Self.read(Array(repeating: UInt8(ascii: "x"), count: limit) + [10, 65])
        #expect(exact.lines.map(\.count) == [limit, 1])
        #expect(throws: InputError(source: "f", reason: .lineTooLong(line: 2))) {
            try Self.read([65, 10] + Array(repeating: UInt8(ascii: "x"), count: limit + 1))
        }
    }

    @Test func aTornEndOfNULsIsSkippedAndCounted() throws {
        // A whole last line, then NULs (and a newline among them).
        #expect(try Self.read(Array("a\nb\n".utf8) + [0, 0, 10, 0]) == (["a", "b"], true, 4))
        // A line torn by the crash: read as an unterminated last line.
        #expect(
            try Self.read(Array("a\n{\"ty".utf8) + [UInt8](repeating: 0, count: 200_000)) == (
                ["a", "{\"ty"], false, 200_000
            ))
        #expect(try Self.read([0, 0, 0]) == ([], true, 3))
    }

    @Test func nulBytesWithTextAfterThemAreAnError() {
        #expect(throws: InputError(source: "f", reason: .nulBytesInside(line: 2))) {
            try Self.read(Array("a\n".utf8) + [0, 0] + Array("b\n".utf8))
        }
        #expect(throws: InputError(source: "f", reason: .nulBytesInside(line: 3))) {
            try Self.read(Array("a\nb".utf8) + [0] + Array("c".utf8))
        }
    }
}
