// What the kernel knows of a TCP socket that glibc's <netinet/tcp.h> does not show: its struct
// tcp_info stops before tcpi_segs_in, so this file takes Linux's own header instead.
#include "cmqtt_shims.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

int cmqtt_tcp_segments_in(int fd) {
    struct tcp_info info;
    socklen_t length = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
    if (length < offsetof(struct tcp_info, tcpi_segs_in) + sizeof info.tcpi_segs_in) return -1;
    return (int)info.tcpi_segs_in;
}

int cmqtt_tcp_cork(int fd, int on) {
    return setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}
