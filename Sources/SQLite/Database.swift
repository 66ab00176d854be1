internal import CSQLite
internal import CSQLiteShims

/// One connection to an SQLite database: it owns the `sqlite3` handle and closes it when it goes.
///
/// Not `Sendable`: one thread uses a connection at a time (SQLite's own rule for a handle). Every
/// statement made by `prepare` keeps its connection alive, and is finalized when it goes.
package final class Database {
    /// The connection; never nil after `init`.
    let handle: OpaquePointer

    /// How `init` opens the file.
    package enum Mode: Sendable {
        /// Read and write, making the file when it is missing.
        case create
        /// Read and write a file that exists (a missing one is `.cannotOpen`).
        case readWrite
        /// Read only: nothing is written, nothing made.
        case readOnly
    }

    /// Opens (or makes) the database at `path` (`:memory:` for one in memory). `busyTimeout`: how
    /// long a statement waits for another connection's lock before it fails with `.busy`.
    package init(path: String, mode: Mode = .create, busyTimeout: Duration = .seconds(5)) throws(SQLiteError)
    {
        var reason: UnsafePointer<CChar>? = nil
        guard csqlite_load(&reason) == 0 else {
            throw SQLiteError(
                libraryMissing: reason.map { String(cString: $0) } ?? "libsqlite3.so.0 is missing")
        }
        let flags =
            switch mode {
            case .create: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            case .readWrite: SQLITE_OPEN_READWRITE
            case .readOnly: SQLITE_OPEN_READONLY
            }
        var opened: OpaquePointer? = nil
        // NOMUTEX: one thread uses a connection at a time, so SQLite's own locks buy nothing.
        let status = csqlite_open_v2(path, &opened, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let opened else {
            let error = SQLiteError(
                code: opened.map { csqlite_extended_errcode($0) } ?? status,
                message: opened.map { String(cString: csqlite_errmsg($0)) }
                    ?? String(cString: csqlite_errstr(status)))
            // A handle is made even when the open fails: it is closed here, its only owner.
            if let opened { csqlite_close_v2(opened) }
            throw error
        }
        handle = opened
        csqlite_extended_result_codes(handle, 1)
        let milliseconds =
            busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        csqlite_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    deinit {
        // close_v2: whatever statement is still alive keeps the connection until it is finalized.
        csqlite_close_v2(handle)
    }

    /// The library's version (`3.40.1`), or nil when it cannot be loaded.
    package static var libraryVersion: String? {
        guard csqlite_load(nil) == 0 else { return nil }
        return String(cString: csqlite_libversion())
    }

    /// Runs `sql` (one or more statements, no parameters, no rows wanted).
    package func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>? = nil
        let status = csqlite_exec(handle, sql, &message)
        defer { if let message { csqlite_free(message) } }
        guard status == SQLITE_OK else {
            throw SQLiteError(
                code: csqlite_extended_errcode(handle),
                message: message.map { String(cString: $0) } ?? String(cString: csqlite_errmsg(handle)))
        }
    }

    /// One statement, to bind and step.
    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        var statement: OpaquePointer? = nil
        let status = csqlite_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else {
            if let statement { csqlite_finalize(statement) }
            throw lastError()
        }
        return Statement(handle: statement, database: self)
    }

    /// `body` in one transaction that takes the write lock at once (`BEGIN IMMEDIATE`, so that two
    /// writers wait for each other through the busy timeout instead of failing midway): committed
    /// when it returns, rolled back when it throws, so a failure (a full disk) leaves the
    /// database as it was.
    package func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // The transaction may already be gone (SQLite rolls back itself on some errors).
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// `PRAGMA name` read as an integer (`user_version`, `page_count`).
    package func pragmaInteger(_ name: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare("PRAGMA " + name)
        guard try statement.step() else { return 0 }
        return statement.int64(0) ?? 0
    }

    /// The error of the last call on this connection.
    func lastError() -> SQLiteError {
        SQLiteError(code: csqlite_extended_errcode(handle), message: String(cString: csqlite_errmsg(handle)))
    }
}
