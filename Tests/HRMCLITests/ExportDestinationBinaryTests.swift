import Foundation
import Testing

/// Where `hrm export -o FILE` writes: never over its own input, never over an existing file
/// without `--force`, never through a symbolic link, and never a half-written file in place of a
/// whole one (a temporary file in the same folder, renamed once it is all on the disk).
@Suite struct ExportDestinationBinaryTests {
    /// A folder with a recording in it (`session.jsonl`), removed by the caller.
    static func folderWithRecording() throws -> (folder: URL, session: String) {
        let folder = try RecordingBinaryTests.folder()
        let session = folder.appendingPathComponent("session.jsonl").path
        try ReplayBinaryTests.recording(ReplayBinaryTests.frames).write(
            toFile: session, atomically: true, encoding: .utf8)
        return (folder, session)
    }

    /// The names in `folder`, sorted: nothing left behind (a temporary file) but what is expected.
    static func names(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test func theInputIsNeverTheOutput() async throws {
        let (folder, session) = try Self.folderWithRecording()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try String(contentsOfFile: session, encoding: .utf8)
        // The same file by another name: a hard link is the same device and inode.
        let alias = folder.appendingPathComponent("alias.jsonl").path
        try FileManager.default.linkItem(atPath: session, toPath: alias)
        for (output, force) in [
            (session, false), (session, true), (alias, true), (folder.path + "/./session.jsonl", true),
        ] {
            let result = try await HRMProcess.run(
                ["export", session, "--format", "json", "-o", output] + (force ? ["--force"] : []))
            #expect(result.status == 73, "\(output) \(force): \(result.stderr)")
            #expect(result.stderr.contains("is the recording itself"), "\(result.stderr)")
            #expect(try String(contentsOfFile: session, encoding: .utf8) == before)
        }
        #expect(try Self.names(folder) == ["alias.jsonl", "session.jsonl"])
    }

    @Test func anExistingFileIsKeptUnlessForced() async throws {
        let (folder, session) = try Self.folderWithRecording()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.csv").path
        try "precious\n".write(toFile: output, atomically: true, encoding: .utf8)
        let refused = try await HRMProcess.run(["export", session, "--format", "csv", "-o", output])
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("exists already"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "precious\n")

        let forced = try await HRMProcess.run(["export", session, "--format", "csv", "-o", output, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let rows = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(rows.count == ReplayBinaryTests.frames.count + 1)
        #expect(try Self.names(folder) == ["out.csv", "session.jsonl"])
    }

    @Test func aSymbolicLinkAtTheDestinationIsNeverFollowed() async throws {
        let (folder, session) = try Self.folderWithRecording()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("elsewhere.tcx").path
        let link = folder.appendingPathComponent("out.tcx").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try await HRMProcess.run(["export", session, "--format", "tcx", "-o", link])
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("symbolic link"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))

        // --force replaces the link itself, never the file it points to.
        let forced = try await HRMProcess.run(["export", session, "--format", "tcx", "-o", link, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))
        let kind = try FileManager.default.attributesOfItem(atPath: link)[.type] as? FileAttributeType
        #expect(kind == .typeRegular)
        #expect(try String(contentsOfFile: link, encoding: .utf8).contains("<TrainingCenterDatabase"))
    }

    /// A file-size limit stands in for a full disk (no root for a tiny tmpfs): the write fails
    /// part-way, the export says so (74), and the file that was there is there as it was, with
    /// no temporary file left beside it.
    @Test func aDiskThatFillsUpLeavesTheOldFileWhole() async throws {
        let (folder, _) = try Self.folderWithRecording()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Long enough that its JSON lines are far above the limit of 1 KiB.
        let frames = (0..<60).map { ReplayBinaryTests.Frame(bpm: 60 + $0 % 30, rr: 900 + $0) }
        let session = folder.appendingPathComponent("long.jsonl").path
        try ReplayBinaryTests.recording(frames).write(toFile: session, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("out.json").path
        try "the old export\n".write(toFile: output, atomically: true, encoding: .utf8)
        let result = try await HRMProcess.run(
            [
                "-c",
                #"ulimit -f 1; exec "$0" export "$1" --format json -o "$2" --force"#,
                HRMProcess.binary.path, session, output,
            ], executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("File too large"), "\(result.stderr)")
        #expect(result.stderr.contains("left as it was"), "\(result.stderr)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "the old export\n")
        #expect(try Self.names(folder) == ["long.jsonl", "out.json", "session.jsonl"])
    }

    @Test func aFolderThatIsMissingCannotBeCreated() async throws {
        let (folder, session) = try Self.folderWithRecording()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("missing/out.fit").path
        let result = try await HRMProcess.run(["export", session, "--format", "fit", "-o", output])
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write"), "\(result.stderr)")
    }
}
