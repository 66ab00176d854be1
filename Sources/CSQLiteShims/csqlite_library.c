// libsqlite3 through dlopen: see csqlite_shims.h for why.
#include "csqlite_shims.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static __typeof__(&sqlite3_open_v2) p_open_v2;
static __typeof__(&sqlite3_close_v2) p_close_v2;
static __typeof__(&sqlite3_errmsg) p_errmsg;
static __typeof__(&sqlite3_errstr) p_errstr;
static __typeof__(&sqlite3_extended_errcode) p_extended_errcode;
static __typeof__(&sqlite3_busy_timeout) p_busy_timeout;
static __typeof__(&sqlite3_extended_result_codes) p_extended_result_codes;
static __typeof__(&sqlite3_exec) p_exec;
static __typeof__(&sqlite3_free) p_free;
static __typeof__(&sqlite3_prepare_v2) p_prepare_v2;
static __typeof__(&sqlite3_finalize) p_finalize;
static __typeof__(&sqlite3_step) p_step;
static __typeof__(&sqlite3_reset) p_reset;
static __typeof__(&sqlite3_clear_bindings) p_clear_bindings;
static __typeof__(&sqlite3_bind_int64) p_bind_int64;
static __typeof__(&sqlite3_bind_double) p_bind_double;
static __typeof__(&sqlite3_bind_null) p_bind_null;
static __typeof__(&sqlite3_bind_text) p_bind_text;
static __typeof__(&sqlite3_column_count) p_column_count;
static __typeof__(&sqlite3_column_type) p_column_type;
static __typeof__(&sqlite3_column_int64) p_column_int64;
static __typeof__(&sqlite3_column_double) p_column_double;
static __typeof__(&sqlite3_column_text) p_column_text;
static __typeof__(&sqlite3_column_bytes) p_column_bytes;
static __typeof__(&sqlite3_changes) p_changes;
static __typeof__(&sqlite3_libversion) p_libversion;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure = NULL;
static char reason[512];

// Debian's libsqlite3-0 (the runtime of libsqlite3-dev); RTLD_LOCAL keeps its symbols out of the
// process's global scope.
static void load(void) {
    void *library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(reason, sizeof reason, "%s", why ? why : "libsqlite3.so.0 could not be loaded");
        failure = reason;
        return;
    }
#define RESOLVE(name)                                                                              \
    do {                                                                                           \
        p_##name = (__typeof__(p_##name))dlsym(library, "sqlite3_" #name);                        \
        if (p_##name == NULL) {                                                                    \
            snprintf(reason, sizeof reason, "libsqlite3.so.0 has no sqlite3_%s", #name);          \
            failure = reason;                                                                      \
            return;                                                                                \
        }                                                                                          \
    } while (0)
    RESOLVE(open_v2);
    RESOLVE(close_v2);
    RESOLVE(errmsg);
    RESOLVE(errstr);
    RESOLVE(extended_errcode);
    RESOLVE(busy_timeout);
    RESOLVE(extended_result_codes);
    RESOLVE(exec);
    RESOLVE(free);
    RESOLVE(prepare_v2);
    RESOLVE(finalize);
    RESOLVE(step);
    RESOLVE(reset);
    RESOLVE(clear_bindings);
    RESOLVE(bind_int64);
    RESOLVE(bind_double);
    RESOLVE(bind_null);
    RESOLVE(bind_text);
    RESOLVE(column_count);
    RESOLVE(column_type);
    RESOLVE(column_int64);
    RESOLVE(column_double);
    RESOLVE(column_text);
    RESOLVE(column_bytes);
    RESOLVE(changes);
    RESOLVE(libversion);
#undef RESOLVE
}

int csqlite_load(const char **error) {
    pthread_once(&once, load);
    if (failure != NULL) {
        if (error != NULL) *error = failure;
        return -1;
    }
    return 0;
}

int csqlite_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs) { return p_open_v2(filename, db, flags, vfs); }
int csqlite_close_v2(sqlite3 *db) { return p_close_v2(db); }
const char *csqlite_errmsg(sqlite3 *db) { return p_errmsg(db); }
const char *csqlite_errstr(int code) { return p_errstr(code); }
int csqlite_extended_errcode(sqlite3 *db) { return p_extended_errcode(db); }
int csqlite_busy_timeout(sqlite3 *db, int milliseconds) { return p_busy_timeout(db, milliseconds); }
int csqlite_extended_result_codes(sqlite3 *db, int on) { return p_extended_result_codes(db, on); }
int csqlite_exec(sqlite3 *db, const char *sql, char **error) { return p_exec(db, sql, NULL, NULL, error); }
void csqlite_free(void *memory) { p_free(memory); }
int csqlite_prepare_v2(sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail) { return p_prepare_v2(db, sql, bytes, statement, tail); }
int csqlite_finalize(sqlite3_stmt *statement) { return p_finalize(statement); }
int csqlite_step(sqlite3_stmt *statement) { return p_step(statement); }
int csqlite_reset(sqlite3_stmt *statement) { return p_reset(statement); }
int csqlite_clear_bindings(sqlite3_stmt *statement) { return p_clear_bindings(statement); }
int csqlite_bind_int64(sqlite3_stmt *statement, int index, int64_t value) { return p_bind_int64(statement, index, value); }
int csqlite_bind_double(sqlite3_stmt *statement, int index, double value) { return p_bind_double(statement, index, value); }
int csqlite_bind_null(sqlite3_stmt *statement, int index) { return p_bind_null(statement, index); }
int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int bytes) { return p_bind_text(statement, index, text, bytes, SQLITE_TRANSIENT); }
int csqlite_column_count(sqlite3_stmt *statement) { return p_column_count(statement); }
int csqlite_column_type(sqlite3_stmt *statement, int column) { return p_column_type(statement, column); }
int64_t csqlite_column_int64(sqlite3_stmt *statement, int column) { return p_column_int64(statement, column); }
double csqlite_column_double(sqlite3_stmt *statement, int column) { return p_column_double(statement, column); }
const unsigned char *csqlite_column_text(sqlite3_stmt *statement, int column) { return p_column_text(statement, column); }
int csqlite_column_bytes(sqlite3_stmt *statement, int column) { return p_column_bytes(statement, column); }
int csqlite_changes(sqlite3 *db) { return p_changes(db); }
const char *csqlite_libversion(void) { return p_libversion(); }
