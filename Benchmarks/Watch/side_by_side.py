#!/usr/bin/env python3
"""hrm watch, the C floor and bleak side by side: `make bench-watch-compare` (issue #29's figures).

Each pair runs the three clients one after another against the same simulated strap (hrm-sim,
2000 notifications at 200/s, watch_bench.py's streaming round), in a rotating order so that no
client always goes first; the report gives each client's medians over the pairs and hrm's ratios:

  p99 latency      hrm / the C floor        goal <= 1.1
  whole-run CPU    hrm / bleak              goal <= 0.25   (user + system, start to exit)
  peak RSS         hrm / bleak              goal <= 0.4    (/usr/bin/time's %M)

Each client's "fixed ms" is its whole run's CPU less the streaming phase's CPU per notification
times the lines it printed: its start, connection and end (a Python launcher's included).
Then `hrm --version`'s start-up (CPU and peak RSS, five runs, medians).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import watch_bench  # noqa: E402  (puts Benchmarks/ on the path)
import benchkit  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GOALS = {"p99": 1.1, "cpu": 0.25, "rss": 0.4}


def one(label, command, sim, rounds):
    rows = watch_bench.streaming(command, sim, rounds)
    return {
        "p99_ms": statistics.median(r["p99_ms"] for r in rows),
        "median_ms": statistics.median(r["median_ms"] for r in rows),
        "cpu_us": statistics.median(r["cpu_us"] for r in rows),
        "cpu_total_s": statistics.median(r["cpu_total_s"] for r in rows),
        "rss_mib": statistics.median(r["rss_mib"] for r in rows),
        # What the run cost besides its notifications (start, connection, end): the whole run's
        # CPU less the streaming phase's per-notification cost times the lines printed.
        "fixed_ms": statistics.median((r["cpu_total_s"] - r["cpu_us"] * r["received"] / 1e6) * 1000
                                      for r in rows),
        "lost": sum(r["lost"] + r["duplicates"] for r in rows),
    }


def startup(hrm, runs=5):
    """`hrm --version`: CPU seconds (wait4's, the run under /usr/bin/time included) and peak RSS
    (MiB, /usr/bin/time's %M), medians."""
    cpu, rss = [], []
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "rss")
        for _ in range(runs):
            child = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", out, hrm, "--version"],
                                     stdout=subprocess.DEVNULL)
            _, _, usage = os.wait4(child.pid, 0)
            cpu.append(usage.ru_utime + usage.ru_stime)
            rss.append(watch_bench.peak_rss_kib(out) / 1024)
    return statistics.median(cpu), statistics.median(rss)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--bleak-python", required=True, help="a python with bleak installed")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each client in a pair")
    parser.add_argument("--before", help="an older hrm, run in every pair beside the others")
    args = parser.parse_args()
    # bleak_watch.py's `#!/usr/bin/env python3` finds the bleak venv's python first.
    venv_bin = os.path.dirname(os.path.abspath(args.bleak_python))
    os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")
    clients = [
        ("hrm", os.path.abspath(args.hrm)),
        ("floor", os.path.join(HERE, "floor", "floor_launcher.py")),
        ("bleak", os.path.join(HERE, "bleak", "bleak_watch.py")),
    ] + ([("before", os.path.abspath(args.before))] if args.before else [])
    results = {label: [] for label, _ in clients}
    # The hrm builds' pages as the same reads left them, not as a build's or a copy's writes did.
    for label, path in clients:
        if label in ("hrm", "before"):
            benchkit.evict_page_cache(path)
    for pair in range(args.pairs):
        order = clients[pair % len(clients):] + clients[:pair % len(clients)]
        for label, command in order:
            print(f"pair {pair + 1}, {label}:", flush=True)
            results[label].append(one(label, command, args.sim, args.rounds))

    def med(label, key):
        return statistics.median(r[key] for r in results[label])

    print(f"\nmedians of {args.pairs} interleaved runs "
          f"(each the median of {args.rounds} round{'s' if args.rounds > 1 else ''}):")
    print(f"  {'client':8} {'p99 ms':>8} {'median ms':>10} {'CPU us/notif':>13} {'whole-run CPU s':>16} "
          f"{'fixed ms':>9} {'peak RSS MiB':>13}")
    for label, _ in clients:
        print(f"  {label:8} {med(label, 'p99_ms'):8.3f} {med(label, 'median_ms'):10.3f} "
              f"{med(label, 'cpu_us'):13.1f} {med(label, 'cpu_total_s'):16.3f} {med(label, 'fixed_ms'):9.1f} "
              f"{med(label, 'rss_mib'):13.2f}")
    # Ratios per pair, then their median: a pair's clients ran minutes apart, not hours.
    ratios = {
        "p99": [h["p99_ms"] / f["p99_ms"] for h, f in zip(results["hrm"], results["floor"])],
        "cpu": [h["cpu_total_s"] / b["cpu_total_s"] for h, b in zip(results["hrm"], results["bleak"])],
        "rss": [h["rss_mib"] / b["rss_mib"] for h, b in zip(results["hrm"], results["bleak"])],
    }
    names = {"p99": "p99, hrm / floor", "cpu": "whole-run CPU, hrm / bleak", "rss": "peak RSS, hrm / bleak"}
    print("\nratios (median of the pairs' ratios; each pair's in brackets):")
    for key, values in ratios.items():
        value = statistics.median(values)
        verdict = "PASS" if value <= GOALS[key] else "MISS"
        print(f"  {names[key]:28} {value:6.3f}  ({', '.join(f'{v:.3f}' for v in values)})  "
              f"goal <= {GOALS[key]}  {verdict}")
    cpu, rss = startup(args.hrm)
    print(f"\nhrm --version: {cpu * 1000:.1f} ms CPU, peak RSS {rss:.2f} MiB (medians of 5)")
    if args.before:
        cpu, rss = startup(args.before)
        print(f"before --version: {cpu * 1000:.1f} ms CPU, peak RSS {rss:.2f} MiB (medians of 5)")
        for key, name in (("cpu_total_s", "whole-run CPU"), ("cpu_us", "CPU per notification"),
                          ("rss_mib", "peak RSS"), ("p99_ms", "p99")):
            pairs = [h[key] / b[key] for h, b in zip(results["hrm"], results["before"])]
            print(f"  {name}, hrm / before: {statistics.median(pairs):.3f} "
                  f"({', '.join(f'{v:.3f}' for v in pairs)})")
    losses = sum(r["lost"] for rows in results.values() for r in rows)
    print(f"lost or duplicated lines: {losses}")
    return 1 if losses else 0


if __name__ == "__main__":
    sys.exit(main())
