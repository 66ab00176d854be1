#!/usr/bin/env python3
"""`hrm export` of a generated 3-hour 1 Hz session with RR intervals, to every format.

Writes a format-1 recording (10,800 measurements, a beat or two each, two 30 s drops), then runs
`hrm export --format F -o FILE --force` ROUNDS times per format and prints the median wall time. The
issue's target: under a second for each.

Usage: export_bench.py --hrm PATH [--rounds 5] [--hours 3]
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import tempfile
import time

DEVICE = "D2:4B:7E:10:20:30"


def stamp(ms):
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03dZ" % millis


def recording(path, hours):
    rng = random.Random(7)
    start = 1795428000000  # 2026-11-23T10:00:00Z
    drops = [(3600_000, 30_000), (7200_000, 30_000)]
    with open(path, "w") as out:
        def line(obj):
            out.write(json.dumps(obj, separators=(",", ":")) + "\n")
        line({"type": "recording", "format": 1, "hrm": "0.1.0", "start": stamp(start), "command": "record"})
        line({"type": "status", "time": stamp(start + 100), "mono_ms": 100, "device": DEVICE, "state": "connected"})
        beat_debt = 0.0
        for second in range(1, int(hours * 3600) + 1):
            t = second * 1000
            dropped = next((d for d in drops if d[0] <= t < d[0] + d[1]), None)
            if dropped:
                if t == dropped[0]:
                    line({"type": "status", "time": stamp(start + t), "mono_ms": t, "device": DEVICE,
                          "state": "disconnected"})
                continue
            if any(t == d[0] + d[1] for d in drops):
                line({"type": "status", "time": stamp(start + t), "mono_ms": t, "device": DEVICE, "state": "connected"})
            bpm = 120 + 30 * math.sin(second / 600)
            beat_debt += bpm / 60
            rr = []
            while beat_debt >= 1:
                beat_debt -= 1
                rr.append(round(60 / bpm * 1024 * (1 + rng.gauss(0, 0.01))))
            payload = bytes([0x16, round(bpm)]) + b"".join(v.to_bytes(2, "little") for v in rr)
            line({"type": "measurement", "time": stamp(start + t), "mono_ms": t, "device": DEVICE, "bpm": round(bpm),
                  "contact": "detected", "energy_kj": None, "rr_1024": rr, "rr_ms": [v * 1000 / 1024 for v in rr],
                  "format": "uint8", "zone": None, "hex": payload.hex()})
        end = int(hours * 3600) * 1000 + 500
        line({"type": "status", "time": stamp(start + end), "mono_ms": end, "device": DEVICE, "state": "stopped"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hours", type=float, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        session = os.path.join(work, "session.jsonl")
        recording(session, args.hours)
        lines = sum(1 for _ in open(session))
        print(f"hrm export of a {args.hours:g}-hour 1 Hz recording ({lines} lines, "
              f"{os.path.getsize(session) / 1e6:.1f} MB), {args.rounds} rounds, median wall time:")
        worst = 0.0
        for fmt in ("fit", "tcx", "csv", "json"):
            times = []
            for _ in range(args.rounds):
                out = os.path.join(work, "out." + fmt)
                began = time.perf_counter()
                # --force: each round replaces the last round's file (hrm refuses an existing one).
                subprocess.run([args.hrm, "export", session, "--format", fmt, "-o", out, "--force"],
                               check=True)
                times.append(time.perf_counter() - began)
            median = statistics.median(times)
            worst = max(worst, median)
            print(f"  {fmt:5} {median * 1000:7.0f} ms   ({os.path.getsize(out) / 1e6:.2f} MB)")
        print(f"  target: under 1 s each: {'PASS' if worst < 1 else 'MISS'}")


if __name__ == "__main__":
    main()
