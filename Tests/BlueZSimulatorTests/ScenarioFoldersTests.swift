import BlueZSimulator
import Foundation
import Testing

/// Where hrm-sim looks for its shipped scenarios: installed (run from PATH, argv[0] only
/// `hrm-sim`), in the checkout, copied elsewhere, and with none anywhere.
@Suite struct ScenarioFoldersTests {
    /// A fresh folder under the temporary directory, removed by the caller.
    static func makeFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "scenario-folders-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// `folder/relative` with `names` as minimal valid scenarios.
    static func scenarios(_ names: [String], in folder: URL, at relative: String) throws {
        let directory = folder.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in names {
            try Data(#"{"description":"\#(name) here","devices":[]}"#.utf8)
                .write(to: directory.appendingPathComponent("\(name).json"))
        }
    }

    @Test func installedBinaryFindsTheShareFolderBesideItsBinFolder() throws {
        let prefix = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        try Self.scenarios(["basic", "drops"], in: prefix, at: "share/hrm/scenarios")
        let folders = ScenarioFolders(
            environment: [:], executable: prefix.appendingPathComponent("bin/hrm-sim").path,
            currentDirectory: "/", installPrefix: "/nonexistent-prefix")
        #expect(folders.existing == [prefix.appendingPathComponent("share/hrm/scenarios").path])
        #expect(ScenarioCatalog.names(in: folders) == ["basic", "drops"])
        #expect(try ScenarioCatalog.load("drops", folders: folders).description == "drops here")
    }

    @Test func checkoutBuildFindsScenariosAboveTheBinary() throws {
        let checkout = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: checkout) }
        try Self.scenarios(["basic"], in: checkout, at: "Scenarios")
        let folders = ScenarioFolders(
            environment: [:],
            executable: checkout.appendingPathComponent(".build/x86_64-unknown-linux-gnu/debug/hrm-sim").path,
            currentDirectory: "/", installPrefix: "/nonexistent-prefix")
        #expect(folders.existing == [checkout.appendingPathComponent("Scenarios").path])
        #expect(ScenarioCatalog.names(in: folders) == ["basic"])
    }

    @Test func copiedBinaryFallsBackToTheBuiltPrefix() throws {
        let prefix = try Self.makeFolder()
        let elsewhere = try Self.makeFolder()
        defer {
            try? FileManager.default.removeItem(at: prefix)
            try? FileManager.default.removeItem(at: elsewhere)
        }
        try Self.scenarios(["crowd"], in: prefix, at: "share/hrm/scenarios")
        let folders = ScenarioFolders(
            environment: [:], executable: elsewhere.appendingPathComponent("hrm-sim").path,
            currentDirectory: elsewhere.path, installPrefix: prefix.path)
        #expect(folders.existing == [prefix.appendingPathComponent("share/hrm/scenarios").path])
        #expect(ScenarioCatalog.names(in: folders) == ["crowd"])
    }

    @Test func environmentComesFirstThenTheCurrentFolderLast() throws {
        let mine = try Self.makeFolder()
        let work = try Self.makeFolder()
        defer {
            try? FileManager.default.removeItem(at: mine)
            try? FileManager.default.removeItem(at: work)
        }
        try Self.scenarios(["mine"], in: mine, at: "")
        try Self.scenarios(["local"], in: work, at: "Scenarios")
        let folders = ScenarioFolders(
            environment: ["HRM_SIM_SCENARIOS": mine.path], executable: "/opt/x/bin/hrm-sim",
            currentDirectory: work.path, installPrefix: "/usr/local")
        #expect(folders.candidates.first == mine.path)
        #expect(folders.candidates.last == work.appendingPathComponent("Scenarios").path)
        #expect(folders.candidates.contains("/opt/x/share/hrm/scenarios"))
        #expect(folders.candidates.contains("/usr/local/share/hrm/scenarios"))
        #expect(ScenarioCatalog.names(in: folders) == ["mine"])
        // A name found only in a later folder is still found.
        #expect(try ScenarioCatalog.load("local", folders: folders).description == "local here")
    }

    @Test func noFolderAnywhereIsNotFoundAndNamesThePlacesLookedAt() throws {
        let empty = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: empty) }
        let folders = ScenarioFolders(
            environment: [:], executable: empty.appendingPathComponent("bin/hrm-sim").path,
            currentDirectory: empty.path, installPrefix: empty.appendingPathComponent("prefix").path)
        #expect(folders.existing.isEmpty)
        #expect(ScenarioCatalog.names(in: folders).isEmpty)
        do {
            _ = try ScenarioCatalog.load("basic", folders: folders)
            Issue.record("loaded")
        } catch let error as ScenarioCatalog.LoadError {
            #expect(error.kind == .notFound)
            #expect(error.description.contains("no scenario folder found"), "\(error)")
            #expect(
                error.description.contains(empty.appendingPathComponent("share/hrm/scenarios").path),
                "\(error)")
            #expect(error.description.contains("HRM_SIM_SCENARIOS"), "\(error)")
        }
    }

    @Test func invalidFileIsInvalidNotNotFound() throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bad.json")
        try Data("{".utf8).write(to: file)
        do {
            _ = try ScenarioCatalog.load(file.path)
            Issue.record("loaded")
        } catch let error as ScenarioCatalog.LoadError {
            #expect(error.kind == .invalid)
        }
        do {
            _ = try ScenarioCatalog.load(folder.appendingPathComponent("missing.json").path)
            Issue.record("loaded")
        } catch let error as ScenarioCatalog.LoadError {
            #expect(error.kind == .notFound)
        }
    }

    @Test func thisProcessLooksBesideItsRealExecutable() throws {
        let folders = ScenarioFolders.current()
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let share = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("share/hrm/scenarios").path
        #expect(folders.candidates.contains(share), "\(folders.candidates)")
        #expect(ScenarioFolders.builtPrefix.hasPrefix("/"))
    }
}
