// libmosquitto as a Clang module; include and link flags come from pkg-config `libmosquitto`.
#include <mosquitto.h>
