internal import CSQLite
internal import CSQLiteShims

/// A value bound to a statement's parameter.
package enum SQLValue: Equatable, Sendable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null
}

/// One prepared statement: it owns the `sqlite3_stmt` and finalizes it when it goes; it keeps its
/// connection alive until then.
package final class Statement {
    private let handle: OpaquePointer
    private let database: Database

    init(handle: OpaquePointer, database: Database) {
        self.handle = handle
        self.database = database
    }

    deinit { csqlite_finalize(handle) }

    /// Binds `values` to the parameters `?1`, `?2`, ... after a reset: the statement runs again.
    package func bind(_ values: [SQLValue]) throws(SQLiteError) {
        csqlite_reset(handle)
        csqlite_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32 =
                switch value {
                case .integer(let number): csqlite_bind_int64(handle, index, number)
                case .real(let number): csqlite_bind_double(handle, index, number)
                case .null: csqlite_bind_null(handle, index)
                case .text(let text):
                    text.utf8CString.withUnsafeBufferPointer {
                        csqlite_bind_text(handle, index, $0.baseAddress, Int32(clamping: $0.count - 1))
                    }
                }
            guard status == SQLITE_OK else { throw database.lastError() }
        }
    }

    /// The next row: true when there is one to read with `int64`, `double`, `text`; false at the
    /// end.
    package func step() throws(SQLiteError) -> Bool {
        switch csqlite_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.lastError()
            csqlite_reset(handle)
            throw error
        }
    }

    /// Binds `values` and steps to the end: for statements that return no rows.
    package func run(_ values: [SQLValue] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
        csqlite_reset(handle)
    }

    /// Column `column` of the current row; nil when it is NULL.
    package func int64(_ column: Int32) -> Int64? {
        csqlite_column_type(handle, column) == SQLITE_NULL ? nil : csqlite_column_int64(handle, column)
    }

    /// Column `column` of the current row; nil when it is NULL.
    package func double(_ column: Int32) -> Double? {
        csqlite_column_type(handle, column) == SQLITE_NULL ? nil : csqlite_column_double(handle, column)
    }

    /// Column `column` of the current row as UTF-8 text; nil when it is NULL.
    package func text(_ column: Int32) -> String? {
        guard csqlite_column_type(handle, column) != SQLITE_NULL,
            let bytes = csqlite_column_text(handle, column)
        else { return nil }
        let count = Int(csqlite_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
