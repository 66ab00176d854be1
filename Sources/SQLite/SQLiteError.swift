/// Why a call to SQLite failed, with a kind callers can act on and SQLite's own words.
///
/// `kind` is the stable part (its raw values are the codes messages may show); `code` is SQLite's
/// extended result code, 0 when the library itself could not be loaded.
package struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, in the terms a caller decides on.
    package enum Kind: String, Sendable, Equatable {
        /// libsqlite3.so.0 could not be loaded (not installed).
        case libraryMissing = "library_missing"
        /// Another connection holds the lock past the busy timeout (SQLITE_BUSY, SQLITE_LOCKED).
        case busy
        /// The file is damaged or not a database at all (SQLITE_CORRUPT, SQLITE_NOTADB).
        case corrupt
        /// The disk or the quota is full (SQLITE_FULL).
        case full
        /// The file or its folder cannot be written (SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH).
        case readOnly = "read_only"
        /// The file cannot be opened or made (SQLITE_CANTOPEN).
        case cannotOpen = "cannot_open"
        /// A read or write of the disk failed (SQLITE_IOERR).
        case io
        /// Anything else: a constraint, a statement hrm got wrong.
        case other
    }

    /// The kind, from `code`.
    package let kind: Kind
    /// SQLite's extended result code.
    package let code: Int32
    /// SQLite's message (`sqlite3_errmsg`), or the loader's.
    package let message: String

    /// An error of `code` (an extended result code) with its message.
    package init(code: Int32, message: String) {
        self.code = code
        self.message = message
        // The primary code is the low byte of an extended one.
        kind =
            switch code & 0xFF {
            case 5, 6: .busy  // SQLITE_BUSY, SQLITE_LOCKED
            case 11, 26: .corrupt  // SQLITE_CORRUPT, SQLITE_NOTADB
            case 13: .full  // SQLITE_FULL
            case 8, 3, 23: .readOnly  // SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH
            case 14: .cannotOpen  // SQLITE_CANTOPEN
            case 10: .io  // SQLITE_IOERR
            default: .other
            }
    }

    /// The library could not be loaded: `reason` is the loader's.
    package init(libraryMissing reason: String) {
        kind = .libraryMissing
        code = 0
        self.message = reason
    }

    /// SQLite's message, as it says it.
    package var description: String { message }
}
