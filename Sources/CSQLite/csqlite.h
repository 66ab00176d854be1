// libsqlite3's header as a Clang module, for its types and constants only: nothing links it. The
// functions are called through CSQLiteShims' loader (csqlite_shims.h), which loads the library
// the first time a database is opened.
#include <sqlite3.h>
