#ifndef CDBUS_SHIMS_H
#define CDBUS_SHIMS_H

#include <dbus/dbus.h>

// libdbus spells its type codes as `#define DBUS_TYPE_ARRAY ((int) 'a')`; casts in macros do not
// import into Swift, so this enum mirrors them as plain integer constants.
enum {
    CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID,
    CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE,
    CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN,
    CDBUS_TYPE_INT16 = DBUS_TYPE_INT16,
    CDBUS_TYPE_UINT16 = DBUS_TYPE_UINT16,
    CDBUS_TYPE_INT32 = DBUS_TYPE_INT32,
    CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32,
    CDBUS_TYPE_INT64 = DBUS_TYPE_INT64,
    CDBUS_TYPE_UINT64 = DBUS_TYPE_UINT64,
    CDBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE,
    CDBUS_TYPE_STRING = DBUS_TYPE_STRING,
    CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH,
    CDBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE,
    CDBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD,
    CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY,
    CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT,
    CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT,
    CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY,
};

// The message-type and header-flag macros are casts too (`((int) 1)`); same reason.
enum {
    CDBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL,
    CDBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN,
    CDBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR,
    CDBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL,
};

// DBusError has bitfields and a padding pointer; the init macro and free function are wrapped so
// Swift owns one through an opaque heap object instead of mirroring the struct.
DBusError *cdbus_error_new(void);
void cdbus_error_free(DBusError *error);
const char *cdbus_error_name(const DBusError *error);
const char *cdbus_error_message(const DBusError *error);

#endif
