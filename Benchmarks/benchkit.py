"""What the benchmark harnesses share: a process's CPU time, percentiles, a free port, and what
/usr/bin/time says of the process it runs."""
import os
import socket

_seen = {}


def _threads_sum(pid, kind, read):
    """`read(text)` of each thread's /proc/PID/task/TID/FILE (`kind` is the file), summed over
    `pid`'s threads, keeping the last value seen of threads that have since exited (the thread
    pool retires idle workers)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        tasks = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/{kind}") as f:
                _seen[(kind, pid, task)] = read(f.read())
        except (FileNotFoundError, ProcessLookupError):
            pass
    return sum(value for (k, owner, _), value in _seen.items() if k == kind and owner == pid)


def cpu_ns(pid):
    """CPU time of `pid` so far, in ns: each thread's schedstat, summed."""
    return _threads_sum(pid, "schedstat", lambda text: int(text.split()[0]))


def switches(pid):
    """Voluntary context switches of `pid`'s threads so far (a thread slept and was woken)."""
    def voluntary(text):
        return next((int(line.split()[1]) for line in text.splitlines()
                     if line.startswith("voluntary_ctxt_switches:")), 0)
    return _threads_sum(pid, "status", voluntary)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def free_port():
    """A loopback port nothing listens on now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def time_child(pid):
    """The process /usr/bin/time (`pid`) runs: the one measured."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return int(f.read().split()[0])


def peak_rss_kib(path):
    """/usr/bin/time's %M (KiB), the last line of its -o file (a signal's note comes first)."""
    with open(path) as f:
        return int(f.read().split()[-1])


def evict_page_cache(path):
    """Drops `path`'s clean pages from the page cache (posix_fadvise DONTNEED; no root needed), so
    that binaries compared for peak RSS are read in alike. A file just written by a build or `cp`
    sits in the cache as the write left it, and the kernel maps its text in larger pieces: two
    copies of one binary measured 9.50 and 9.99 MiB until both were evicted (9.62 and 9.54;
    Benchmarks/Watch/README.md, issue #29's seventh session)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
