// libdbus's archive calls two libsystemd functions, both for a bus *server* started by systemd's
// socket activation (dbus-daemon's --systemd-activation), which a client never is. Linking the
// archive (Package.swift, staticLibDBusFolder) with these stubs keeps libsystemd and the six libraries
// it loads out of hrm's process. Compiled only for that link: with the shared libdbus, libsystemd
// provides them.
#ifdef HRM_STATIC_LIBDBUS

#include <errno.h>

// No descriptors were passed by a service manager.
int sd_listen_fds(int unset_environment);
int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0;
}

// Never called when sd_listen_fds says there are none; an error, should it be.
int sd_is_socket(int fd, int family, int type, int listening);
int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd;
    (void)family;
    (void)type;
    (void)listening;
    return -ENOSYS;
}

#endif
