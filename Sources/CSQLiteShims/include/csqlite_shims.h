#ifndef CSQLITE_SHIMS_H
#define CSQLITE_SHIMS_H

#include <stdint.h>
#include <sqlite3.h>

// libsqlite3 is loaded when the session library's index is first opened, not when hrm starts, so
// that `hrm watch` (which never lists sessions) maps none of it. csqlite_load() loads it once
// (thread-safe) and returns 0, or -1 with the loader's reason in `error`; after a 0 the csqlite_
// functions below are SQLite's own (sqlite3_open_v2 and so on, same arguments), called through
// the pointers the loader found.
int csqlite_load(const char **error);

int csqlite_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs);
int csqlite_close_v2(sqlite3 *db);
const char *csqlite_errmsg(sqlite3 *db);
const char *csqlite_errstr(int code);
int csqlite_extended_errcode(sqlite3 *db);
int csqlite_busy_timeout(sqlite3 *db, int milliseconds);
int csqlite_extended_result_codes(sqlite3 *db, int on);
int csqlite_exec(sqlite3 *db, const char *sql, char **error);
void csqlite_free(void *memory);
int csqlite_prepare_v2(sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail);
int csqlite_finalize(sqlite3_stmt *statement);
int csqlite_step(sqlite3_stmt *statement);
int csqlite_reset(sqlite3_stmt *statement);
int csqlite_clear_bindings(sqlite3_stmt *statement);
int csqlite_bind_int64(sqlite3_stmt *statement, int index, int64_t value);
int csqlite_bind_double(sqlite3_stmt *statement, int index, double value);
int csqlite_bind_null(sqlite3_stmt *statement, int index);
// sqlite3_bind_text with SQLITE_TRANSIENT (SQLite copies the text), a macro Swift cannot import.
int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int bytes);
int csqlite_column_count(sqlite3_stmt *statement);
int csqlite_column_type(sqlite3_stmt *statement, int column);
int64_t csqlite_column_int64(sqlite3_stmt *statement, int column);
double csqlite_column_double(sqlite3_stmt *statement, int column);
const unsigned char *csqlite_column_text(sqlite3_stmt *statement, int column);
int csqlite_column_bytes(sqlite3_stmt *statement, int column);
int csqlite_changes(sqlite3 *db);
const char *csqlite_libversion(void);

#endif
