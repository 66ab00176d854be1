/* The floor for `make bench-watch`: the least a reader of the AcquireNotify socket can do per
 * notification. One blocking recv(2), the heart rate read as the flags say (UINT8 or UINT16,
 * little-endian), one write(2) of a JSON line the benchmark harness accepts. No timestamp, no
 * decoding beyond the value, no buffering.
 *
 * usage: floor_reader FD SECONDS   (floor_launcher.py acquires FD and execs this)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: floor_reader FD SECONDS\n");
        return 64;
    }
    int fd = atoi(argv[1]);
    double end = now() + atof(argv[2]);
    unsigned char frame[600];
    char line[64];
    while (now() < end) {
        ssize_t n = recv(fd, frame, sizeof frame, 0);
        if (n <= 0) break;
        if (n < 2) continue;
        unsigned bpm = (frame[0] & 1) && n >= 3 ? (unsigned)(frame[1] | frame[2] << 8) : frame[1];
        int length = snprintf(line, sizeof line, "{\"type\":\"measurement\",\"bpm\":%u}\n", bpm);
        if (write(STDOUT_FILENO, line, (size_t)length) < 0) return 74;
    }
    return 0;
}
