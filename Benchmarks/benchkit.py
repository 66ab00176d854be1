"""What the benchmark harnesses share: a process's CPU time, percentiles, a free port."""
import os
import socket

_thread_ns = {}


def cpu_ns(pid):
    """CPU time of `pid` so far, in ns: each thread's schedstat, summed, keeping the last value
    seen of threads that have since exited (the thread pool retires idle workers)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        tasks = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                _thread_ns[(pid, task)] = int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return sum(value for (owner, _), value in _thread_ns.items() if owner == pid)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def free_port():
    """A loopback port nothing listens on now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
