#include "cdbus_shims.h"

#include <stdlib.h>

// The Swift side relies on these being the ASCII codes the specification lists.
_Static_assert(DBUS_TYPE_ARRAY == 'a' && DBUS_TYPE_DICT_ENTRY == 'e' && DBUS_TYPE_UNIX_FD == 'h',
               "libdbus type codes are not the D-Bus specification's");

DBusError *cdbus_error_new(void) {
    DBusError *error = malloc(sizeof(DBusError));
    if (error != NULL) {
        dbus_error_init(error);
    }
    return error;
}

void cdbus_error_free(DBusError *error) {
    if (error != NULL) {
        dbus_error_free(error);
        free(error);
    }
}

const char *cdbus_error_name(const DBusError *error) { return error->name; }

const char *cdbus_error_message(const DBusError *error) { return error->message; }
