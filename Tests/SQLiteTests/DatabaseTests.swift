import Glibc
import SQLite
import Testing

/// The Swift layer over libsqlite3: values round-trip, a transaction is all or nothing, and
/// SQLite's failures come back as the kinds callers decide on.
@Suite struct DatabaseTests {
    /// A fresh file path in a folder of the test's own.
    static func path() -> String {
        var template = Array("/tmp/hrm-sqlite-XXXXXX".utf8CString)
        let folder = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return nil }
            return String(cString: made)
        }
        return (folder ?? "/tmp") + "/test.sqlite3"
    }

    /// The database at `path`, its WAL files and its folder gone.
    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        if let slash = path.lastIndex(of: "/") { rmdir(String(path[..<slash])) }
    }

    @Test func valuesRoundTrip() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, n TEXT)")
        try database.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)").run([
            .integer(-9_007_199_254_740_993), .real(0.1), .text("Polar \"H10\" é\u{0}x"), .null,
        ])
        let row = try database.prepare("SELECT i, r, s, n FROM t")
        #expect(try row.step())
        #expect(row.int64(0) == -9_007_199_254_740_993)
        #expect(row.double(1) == 0.1)
        #expect(row.text(2) == "Polar \"H10\" é\u{0}x")
        #expect(row.text(3) == nil && row.int64(3) == nil)
        #expect(try row.step() == false)
    }

    @Test func aTransactionThatFailsLeavesNothing() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
        let insert = try database.prepare("INSERT INTO t VALUES (?1)")
        #expect(throws: SQLiteError.self) {
            try database.transaction { () throws(SQLiteError) in
                try insert.run([.integer(1)])
                try insert.run([.integer(1)])  // the same key: a constraint fails
            }
        }
        #expect(try database.pragmaInteger("user_version") == 0)
        let count = try database.prepare("SELECT count(*) FROM t")
        #expect(try count.step())
        #expect(count.int64(0) == 0)
    }

    @Test func aFileThatIsNotADatabaseIsCorrupt() throws {
        let path = Self.path()
        defer { Self.remove(path) }
        let junk = [UInt8](repeating: 0x5A, count: 4096)
        let descriptor = open(path, O_CREAT | O_WRONLY, 0o644)
        #expect(junk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == 4096)
        close(descriptor)
        let database = try Database(path: path)
        do {
            _ = try database.pragmaInteger("user_version")
            Issue.record("a file of junk read as a database")
        } catch {
            #expect(error.kind == .corrupt, "\(error)")
        }
    }

    @Test func aFileThatCannotBeOpenedSaysSo() {
        do {
            _ = try Database(path: "/nonexistent-folder-of-hrm/x.sqlite3")
            Issue.record("opened a database in a folder that does not exist")
        } catch {
            #expect(error.kind == .cannotOpen, "\(error)")
        }
        do {
            let path = Self.path()
            defer { Self.remove(path) }
            _ = try Database(path: path + "-missing", mode: .readWrite)
            Issue.record("opened a missing database without making it")
        } catch {
            #expect(error.kind == .cannotOpen, "\(error)")
        }
    }

    /// A second connection waits the busy timeout for the first one's write lock, then fails
    /// with `.busy`; reads go on meanwhile (WAL).
    @Test func aWriterWaitsForAnotherThenGivesUp() throws {
        let path = Self.path()
        defer { Self.remove(path) }
        let first = try Database(path: path)
        try first.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (k INTEGER)")
        let second = try Database(path: path, busyTimeout: .milliseconds(50))
        try first.execute("BEGIN IMMEDIATE")
        let count = try second.prepare("SELECT count(*) FROM t")
        #expect(try count.step())
        do {
            try second.execute("BEGIN IMMEDIATE")
            Issue.record("two writers at once")
        } catch {
            #expect(error.kind == .busy, "\(error)")
        }
        try first.execute("COMMIT")
    }
}
