// libdbus-1 as a Clang module; include paths come from pkg-config `dbus-1`.
#include <dbus/dbus.h>
