#!/usr/bin/env python3
"""The floor reader given one kind of extra work per notification, to see what a notification's
cost is made of (issue #29, eighth session): data pages read, a longer line, idle threads, a chain
of arithmetic, distinct functions called (cold code), those functions' lines prefetched first.

Each variant is a build of the same C reader (recv, the bpm, one write, as floor_reader.c) with
knobs; the rounds run interleaved through watch_bench.py, medians of CPU per notification:

    python3 Benchmarks/Watch/floor/variants.py --rounds 4 base pages=48 calls=320 calls=320,prefetch=1

Knobs (comma-separated, in one variant): pages=N (one line read on each of N pages of data),
lines=N (lines read on each of those pages), pad=N (bytes added to the line), threads=N (idle
threads in the process), spin=N (a chain of N multiply-adds), calls=N (N distinct functions of one
64-byte line each, called through a table), prefetch=1 (their lines prefetched into L2 first).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import watch_bench  # noqa: E402

FUNCTIONS = 320

READER = r"""
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t (*function)(uint64_t);
extern function table[];
static unsigned char arena[512 * 4096] __attribute__((aligned(4096)));

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *idle(void *arg) { (void)arg; for (;;) pause(); return NULL; }

static int knob(const char *name) { const char *v = getenv(name); return v ? atoi(v) : 0; }

int main(int argc, char **argv) {
    if (argc != 3) return 64;
    int fd = atoi(argv[1]);
    int pages = knob("PAGES"), lines = knob("LINES") ? knob("LINES") : 1, pad = knob("PAD");
    int threads = knob("THREADS"), spin = knob("SPIN"), calls = knob("CALLS"), prefetch = knob("PREFETCH");
    if (pages > 512 || calls > %(functions)d || pad > 600) return 64;
    for (size_t i = 0; i < sizeof arena; i += 64) arena[i] = (unsigned char)i;
    for (int i = 0; i < threads; i++) { pthread_t t; pthread_create(&t, NULL, idle, NULL); }
    char padding[601];
    for (int i = 0; i < pad; i++) padding[i] = 'x';
    padding[pad] = 0;
    double end = now() + atof(argv[2]);
    unsigned char frame[600];
    char line[700];
    volatile uint64_t sink = 0;
    while (now() < end) {
        ssize_t n = recv(fd, frame, sizeof frame, 0);
        if (n <= 0) break;
        if (n < 2) continue;
        uint64_t s = frame[1];
        for (int p = 0; p < pages; p++)
            for (int l = 0; l < lines; l++) s += arena[(size_t)p * 4096 + (size_t)((l * 7 + p) %% 64) * 64];
        for (int i = 0; i < spin; i++) s = s * 6364136223846793005u + 1442695040888963407u;
        if (prefetch && calls > 0)
            for (const char *p = (const char *)table[0]; p <= (const char *)table[calls - 1]; p += 64)
                __builtin_prefetch(p, 0, 2);
        for (int k = 0; k < calls; k++) s = table[k](s);
        sink += s;
        unsigned bpm = (frame[0] & 1) && n >= 3 ? (unsigned)(frame[1] | frame[2] << 8) : frame[1];
        int length = snprintf(line, sizeof line, "{\"type\":\"measurement\",\"bpm\":%%u%%s%%s%%s}\n", bpm,
                              pad ? ",\"pad\":\"" : "", padding, pad ? "\"" : "");
        if (write(STDOUT_FILENO, line, (size_t)length) < 0) return 74;
    }
    return 0;
}
"""


def functions_source(count):
    """`count` functions of a few multiply-adds each, one 64-byte line apart, and their table."""
    lines = ["#include <stdint.h>", "uint64_t g;"]
    for i in range(count):
        lines.append(
            f"__attribute__((noinline, aligned(64))) uint64_t f{i}(uint64_t x) {{ x = x * {2 * i + 3}u + g; "
            f"x ^= x >> {i % 13 + 1}; x += {i}u * x; g += x & 7; return x * 0x9E3779B97F4A7C15u + {i}u; }}")
    lines.append("typedef uint64_t (*function)(uint64_t);")
    lines.append("function table[] = {" + ", ".join(f"f{i}" for i in range(count)) + "};")
    return "\n".join(lines) + "\n"


def build(work):
    reader, functions, binary = (os.path.join(work, name) for name in ("reader.c", "functions.c", "reader"))
    with open(reader, "w") as f:
        f.write(READER % {"functions": FUNCTIONS})
    with open(functions, "w") as f:
        f.write(functions_source(FUNCTIONS))
    subprocess.run(["cc", "-O2", "-Wall", "-pthread", "-o", binary, reader, functions], check=True)
    return binary


def knobs(variant):
    """A variant's environment: `pages=48,lines=4` -> PAGES=48, LINES=4; `base` -> none."""
    if variant == "base":
        return {}
    return {name.upper(): value for name, value in (part.split("=", 1) for part in variant.split(","))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("variants", nargs="+", help="base, or knobs such as pages=48,lines=4")
    args = parser.parse_args()
    launcher = os.path.join(HERE, "floor_launcher.py")
    results = {variant: [] for variant in args.variants}
    names = ("PAGES", "LINES", "PAD", "THREADS", "SPIN", "CALLS", "PREFETCH")
    with tempfile.TemporaryDirectory() as work:
        os.environ["FLOOR_READER"] = build(work)
        for n in range(args.rounds):
            order = args.variants if n % 2 == 0 else list(reversed(args.variants))
            for variant in order:
                for name in names:
                    os.environ.pop(name, None)
                os.environ.update(knobs(variant))
                row = watch_bench.streaming(launcher, args.sim, 1)[0]
                results[variant].append(row["cpu_us"])
    for variant, values in results.items():
        print(f"{variant:28} CPU {statistics.median(values):6.2f} us/notification (median of "
              f"{len(values)}: {', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
