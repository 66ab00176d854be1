import InputFiles
import Monitor

#if canImport(Glibc)
    import Glibc
#endif

/// The session library as `hrm sessions` lists it and `hrm record` adds to it: the index brought
/// up to date from a scan of the folder (new, changed and removed files, found by `stat`), or,
/// when the index cannot be used, the files read as they are. Never fatal, and never touches a
/// recording: the index is only ever a copy of what the files say.
package enum SessionLibraryIndex {
    /// What a listing says as it goes (each a line for stderr, without the command's name), and
    /// how far the reading of files has got (`read`, `of`): for a progress line on a terminal.
    package struct Reporter {
        package var say: (String) -> Void
        package var progress: ((_ read: Int, _ of: Int) -> Void)?

        /// Every stored property, as given.
        package init(say: @escaping (String) -> Void, progress: ((Int, Int) -> Void)? = nil) {
            self.say = say
            self.progress = progress
        }
    }

    /// Read this many files or more (or make the index) and the listing says it is indexing.
    static let toldAbove = 20

    /// Every file of `folder`, newest first, from the index, brought up to date first; nil when
    /// the folder does not exist yet. `reindex`: the index made again from every file. Throws
    /// only when the folder cannot be listed.
    package static func entries(of folder: SessionsFolder, reindex: Bool = false, reporter: Reporter)
        throws(SessionsFolder.Unreadable) -> [LibraryEntry]?
    {
        guard let stamps = try FileStamp.scan(folder) else { return nil }
        let path = folder.libraryPath
        if reindex { removeIndex(at: path) }
        do throws(LibraryFailure) {
            return try fromIndex(path, folder: folder, stamps: stamps, reporter: reporter, reindexed: reindex)
        } catch {
            switch error {
            case .sqlite(let sqlite) where sqlite.kind == .corrupt:
                reporter.say("the index \(path) is damaged (\(sqlite)): made again from the recordings")
                removeIndex(at: path)
                if let entries = try? fromIndex(
                    path, folder: folder, stamps: stamps, reporter: reporter, reindexed: true)
                {
                    return entries
                }
            case .sqlite(let sqlite) where sqlite.kind == .busy:
                reporter.say("the index \(path) is busy (another hrm holds it): listing from the recordings")
            case .newerSchema:
                reporter.say(
                    "the index \(path) was \(error): listing from the recordings, the index left as it is")
            default:
                reporter.say("warning: cannot use the index \(path): \(error); listing from the recordings")
            }
        }
        return fromFiles(folder, names: stamps.keys.sorted(by: >), reporter: reporter)
    }

    /// The index updated for the file at `name` alone (what `hrm record` just closed): cheap, one
    /// file read. Nothing is done when there is no index of this version yet (the next listing
    /// makes it from every file).
    package static func recorded(_ name: String, in folder: SessionsFolder) throws(LibraryFailure) {
        let path = folder.libraryPath
        guard access(path, F_OK) == 0 else { return }
        let index: SessionIndex
        do throws(LibraryFailure) {
            index = try SessionIndex(path: path, making: false)
        } catch {
            // An index of another hrm's version: the next listing makes it again (or leaves it).
            if error == .notMade { return }
            if case .newerSchema = error { return }
            throw error
        }
        let file = folder.path + "/" + name
        guard let stamp = FileStamp.of(file) else { return }
        let entry = RecordingSummariser.entry(
            name: name, path: file, shown: TerminalText.sanitised(name, limit: TerminalText.messageLimit))
        try index.apply([(entry, stamp)], removing: [])
    }

    private static func fromIndex(
        _ path: String, folder: SessionsFolder, stamps: [String: FileStamp], reporter: Reporter,
        reindexed: Bool
    ) throws(LibraryFailure) -> [LibraryEntry] {
        let index = try SessionIndex(path: path)
        switch index.found {
        case .current, .made: break
        case .older(let version):
            reporter.say(
                "the index \(path) was made by an older hrm (schema \(version)): made again from the recordings"
            )
        }
        let known = try index.stamps()
        let removed = known.keys.filter { stamps[$0] == nil }
        let changed = stamps.filter { name, stamp in
            guard let old = known[name] else { return true }
            return old.retry || !stamp.regular || old.stamp != stamp
        }
        .keys.sorted(by: >)
        if !changed.isEmpty, index.found != .current || reindexed || changed.count >= toldAbove {
            let bytes = changed.reduce(Int64(0)) { $0 + max(stamps[$1]?.size ?? 0, 0) }
            reporter.say(
                "indexing \(changed.count) recording\(changed.count == 1 ? "" : "s") (\(megabytes(bytes))) of \(folder.path) into \(path): once; later listings read the index"
            )
        }
        var read: [(entry: LibraryEntry, stamp: FileStamp)] = []
        for (number, name) in changed.enumerated() {
            guard let stamp = stamps[name] else { continue }
            read.append((summarise(name, in: folder), stamp))
            reporter.progress?(number + 1, changed.count)
        }
        try index.apply(read, removing: removed)
        return try index.entries()
    }

    /// Every file read as it is, without the index.
    private static func fromFiles(_ folder: SessionsFolder, names: [String], reporter: Reporter)
        -> [LibraryEntry]
    {
        var entries: [LibraryEntry] = []
        for (number, name) in names.enumerated() {
            entries.append(summarise(name, in: folder))
            reporter.progress?(number + 1, names.count)
        }
        return entries
    }

    private static func summarise(_ name: String, in folder: SessionsFolder) -> LibraryEntry {
        RecordingSummariser.entry(
            name: name, path: folder.path + "/" + name,
            shown: TerminalText.sanitised(name, limit: TerminalText.messageLimit))
    }

    /// The index and its WAL files gone: what is made again from the recordings.
    private static func removeIndex(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    private static func megabytes(_ bytes: Int64) -> String {
        let tenths = (bytes + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}

extension SessionsFolder {
    /// The index beside the sessions folder: `$XDG_DATA_HOME/hrm/library.sqlite3`.
    package var libraryPath: String {
        guard let slash = path.lastIndex(of: "/") else { return "library.sqlite3" }
        return String(path[..<slash]) + "/library.sqlite3"
    }
}
