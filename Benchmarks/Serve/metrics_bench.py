#!/usr/bin/env python3
"""What a Prometheus scrape of `hrm serve`'s /metrics costs hrm serve, with 8 straps at 1 Hz.

hrm serve (the release build) watches 8 simulated straps (`hrm serve --all`); once /metrics shows
all 8, each round measures hrm-serve's CPU time (all threads, /proc/PID/task/*/schedstat) over a
quiet stretch and over a stretch of back-to-back scrapes (keep-alive connection, one scraper),
and reports (CPU while scraping - CPU while quiet, scaled to the same time) / scrapes. Quiet and
scraping stretches alternate, so the machine's drift falls on both alike; the median over rounds
is reported. Each scrape is also parsed by nothing: only its size is checked.

    /usr/bin/python3 Benchmarks/Serve/metrics_bench.py --hrm .build/release/hrm --sim .build/release/hrm-sim

Run as hrm-sim's command (`--inner`), or without it to drive the run and print the report.
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchkit import cpu_ns  # noqa: E402

STRAPS = 8


def scenario():
    devices = []
    for n in range(1, STRAPS + 1):
        devices.append({
            "address": f"C0:FF:EE:00:09:{n:02X}", "name": f"Metrics {n:02}", "rssi": -50 - n, "uuids": ["180d"],
            "battery": 90 - n, "heartRate": {"bpm": 60 + 5 * n, "variability": 4, "interval": 1.0, "seed": 200 + n}})
    return {"description": "metrics benchmark", "devices": devices}


def inner(args):
    child = subprocess.Popen(
        [args.hrm, "serve", "--all", "--no-config", "--listen", "127.0.0.1:0", "--zones", "100,120,140,160,180"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    port = None
    for raw in child.stderr:
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", raw.decode(errors="replace"))
        if match:
            port = int(match.group(1))
            break
    threading.Thread(target=lambda: [None for _ in child.stderr], daemon=True).start()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def scrape():
        connection.request("GET", "/metrics")
        response = connection.getresponse()
        return response.read()

    deadline = time.monotonic() + 120
    while scrape().count(b"hrm_heart_rate_bpm{") < STRAPS:
        if time.monotonic() > deadline:
            raise SystemExit("metrics-bench: the 8 straps did not all appear in /metrics")
        time.sleep(0.5)
    size = len(scrape())
    rounds = []
    for _ in range(args.rounds):
        start, cpu0 = time.monotonic_ns(), cpu_ns(child.pid)
        time.sleep(args.seconds)
        quiet_ns, quiet_cpu = time.monotonic_ns() - start, cpu_ns(child.pid) - cpu0
        start, cpu0, scrapes = time.monotonic_ns(), cpu_ns(child.pid), 0
        while time.monotonic_ns() - start < args.seconds * 1e9:
            scrape()
            scrapes += 1
        busy_ns, busy_cpu = time.monotonic_ns() - start, cpu_ns(child.pid) - cpu0
        per_scrape = (busy_cpu - quiet_cpu * busy_ns / quiet_ns) / scrapes
        rounds.append({"per_scrape_us": per_scrape / 1000, "scrapes": scrapes,
                       "quiet_pct": 100 * quiet_cpu / quiet_ns})
    child.terminate()
    child.wait(timeout=60)
    json.dump({"size": size, "rounds": rounds}, open(args.out, "w"))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    with tempfile.TemporaryDirectory() as work:
        path, out = os.path.join(work, "scenario.json"), os.path.join(work, "out.json")
        json.dump(scenario(), open(path, "w"))
        subprocess.run([args.sim, "--scenario", path, "--", sys.executable, __file__, "--inner", "--hrm", args.hrm,
                        "--out", out, "--rounds", str(args.rounds), "--seconds", str(args.seconds)], check=True)
        result = json.load(open(out))
    for n, r in enumerate(result["rounds"], 1):
        print(f"round {n}: {r['per_scrape_us']:.1f} us of hrm serve's CPU per scrape ({r['scrapes']} scrapes; "
              f"quiet: {r['quiet_pct']:.3f} % of a core)")
    median = statistics.median(r["per_scrape_us"] for r in result["rounds"])
    print(f"\n/metrics with {STRAPS} straps: {result['size']} bytes; median {median:.1f} us of CPU per scrape")
    return 0


if __name__ == "__main__":
    sys.exit(main())
