#!/usr/bin/env python3
"""What --ecg --acc cost `hrm watch` (`make bench-ecg`, see README.md beside this file).

Rounds interleaved: `hrm watch --json` against hrm-sim's `polar-h10-paired` strap (heart rate at
1 Hz) for SECONDS, without and then with `--ecg --acc` (130 Hz ECG in frames of 73 samples, 200 Hz
acceleration in frames of 36, R peaks found). For each run: hrm's CPU time (user + system, the
whole run, from wait4's rusage) and its own peak RSS (`/usr/bin/time`'s %M). The report gives the medians and the
difference per second of streams.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def run(hrm, sim, seconds, extra):
    """One run under hrm-sim; returns (cpu_s, peak_rss_kib, lines by type)."""
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, XDG_STATE_HOME=state, XDG_CONFIG_HOME=state, XDG_DATA_HOME=state)
        # hrm's own peak RSS from /usr/bin/time: a child's ru_maxrss is at least what the
        # process it was forked from had (this Python's 12.8 MB), so it could not show less.
        script = (
            f"/usr/bin/time -f %M -o {state}/rss '{hrm}' watch --json --no-config --duration {seconds} "
            f"{' '.join(extra)} A0:9E:1A:1A:2B:3C > {state}/out; echo $? > {state}/status")
        # hrm-sim runs a shell whose child is hrm: the shell's own rusage is nothing beside it,
        # and RUSAGE_CHILDREN of a wrapper that only waits for it counts hrm alone.
        wrapper = (
            "import resource, subprocess, sys, json; "
            f"subprocess.run(['/bin/bash', '-c', {script!r}]); "
            "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
            f"open('{state}/usage', 'w').write(json.dumps([r.ru_utime + r.ru_stime, r.ru_maxrss]))")
        subprocess.run([sim, "--scenario", "polar-h10-paired", "--", sys.executable, "-c", wrapper],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        cpu, _ = json.load(open(f"{state}/usage"))
        rss = int(open(f"{state}/rss").read().split()[-1])
        status = open(f"{state}/status").read().strip()
        if status != "0":
            sys.exit(f"hrm exited {status}")
        counts = {}
        for line in open(f"{state}/out"):
            kind = json.loads(line).get("type")
            counts[kind] = counts.get(kind, 0) + 1
        return cpu, rss, counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=25)
    args = parser.parse_args()
    rows = {"plain": [], "ecg": []}
    for n in range(args.rounds):
        for mode, extra in (("plain", []), ("ecg", ["--ecg", "--acc"])):
            cpu, rss, counts = run(args.hrm, args.sim, args.seconds, extra)
            rows[mode].append((cpu, rss))
            print(f"round {n + 1} {mode:5}: cpu {cpu:.3f} s  peak RSS {rss / 1024:.1f} MiB  "
                  f"measurements {counts.get('measurement', 0)} ecg {counts.get('ecg', 0)} "
                  f"acc {counts.get('acc', 0)} ecg_beat {counts.get('ecg_beat', 0)}", flush=True)
            if mode == "ecg" and (counts.get("ecg", 0) == 0 or counts.get("acc", 0) == 0):
                sys.exit("no ecg or acc events: the streams did not run")
    med = {m: (statistics.median(c for c, _ in r), statistics.median(s for _, s in r)) for m, r in rows.items()}
    extra_cpu = med["ecg"][0] - med["plain"][0]
    print(f"\nmedians over {args.rounds} rounds of {args.seconds} s:")
    print(f"  hrm watch --json              cpu {med['plain'][0]:.3f} s  peak RSS {med['plain'][1] / 1024:.1f} MiB")
    print(f"  hrm watch --json --ecg --acc  cpu {med['ecg'][0]:.3f} s  peak RSS {med['ecg'][1] / 1024:.1f} MiB")
    print(f"  the streams: {extra_cpu * 1000 / args.seconds:.2f} ms of CPU per second "
          f"({extra_cpu / args.seconds * 100:.2f} % of a core), "
          f"+{(med['ecg'][1] - med['plain'][1]) / 1024:.1f} MiB peak RSS")


if __name__ == "__main__":
    main()
