#!/usr/bin/env python3
"""The session library: `hrm sessions` over a year of daily one-hour recordings.

Writes DAYS recordings (default 365) of one hour each at 1 Hz with RR intervals and zones, one a
day, as `hrm record` writes them (a drop of 30 s in each), into a data folder of its own, then
measures with the built hrm:

  - indexing from nothing: `hrm sessions` with no index (seconds, and MB of recordings per second);
  - listing from the index: `hrm sessions`, median of ROUNDS (the issue's target: <= 0.5 s);
  - `hrm trends` over every day since the first recording, from the index;
  - what `hrm record` adds at the end of a session: `hrm sessions` with one new recording to index,
    less a listing with none (one file read, one transaction);
  - the reader: `hrm export --format fit` and `--format csv` and `hrm hrv` of one 24-hour
    recording (20 MB; MB/s of the whole run, start-up included: FIT's encoding is small beside the
    reading, hrv's artefact correction is not), and with --before (an older hrm) the same for it,
    and its `hrm sessions` (which read every file at each listing).

The recordings are kept in .build/bench-library/ (made again when the generator changes) so that
later runs skip the writing.

Usage: library_bench.py --hrm PATH [--before PATH] [--days 365] [--rounds 5]
"""

import argparse
import hashlib
import inspect
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

DEVICE = "D2:4B:7E:10:20:30"
DAY_MS = 86_400_000
FIRST_START = 1_767_600_000_000  # 2026-01-05T08:00:00Z


def stamp(ms):
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03dZ" % millis


def file_name(start_ms):
    return time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime(start_ms // 1000)) + "_" + DEVICE.replace(":", "-") + ".jsonl"


def recording(path, start, seconds, seed):
    """A recording as hrm record writes it, written with string formatting (json.dumps of 1.3
    million lines would take minutes): the same keys, in the same order, as MonitorEventJSON."""
    rng = random.Random(seed)
    drop = (seconds // 2 * 1000, 30_000)
    out = [
        '{"type":"recording","format":1,"hrm":"0.1.0","start":"%s","command":"record"}\n' % stamp(start),
        '{"type":"status","time":"%s","mono_ms":100,"device":"%s","state":"connected"}\n' % (stamp(start + 100), DEVICE),
        '{"type":"info","time":"%s","mono_ms":180,"device":"%s","name":"Polar H10 7E102030","battery":87}\n'
        % (stamp(start + 180), DEVICE),
    ]
    beat_debt = 0.0
    base = 62 + rng.random() * 8
    for second in range(1, seconds + 1):
        t = second * 1000
        if drop[0] <= t < drop[0] + drop[1]:
            if t == drop[0]:
                out.append('{"type":"status","time":"%s","mono_ms":%d,"device":"%s","state":"disconnected","detail":"link lost"}\n'
                           % (stamp(start + t), t, DEVICE))
            continue
        if t == drop[0] + drop[1]:
            out.append('{"type":"status","time":"%s","mono_ms":%d,"device":"%s","state":"connected"}\n'
                       % (stamp(start + t), t, DEVICE))
        bpm = base + 25 * max(0.0, math.sin(second / 700))
        beat_debt += bpm / 60
        rr = []
        while beat_debt >= 1:
            beat_debt -= 1
            rr.append(round(60 / bpm * 1024 * (1 + rng.gauss(0, 0.03))))
        payload = bytes([0x16, round(bpm)]) + b"".join(v.to_bytes(2, "little") for v in rr)
        zone = 1 if bpm < 70 else 2 if bpm < 80 else 3
        out.append(
            '{"type":"measurement","time":"%s","mono_ms":%d,"device":"%s","bpm":%d,"contact":"detected",'
            '"energy_kj":null,"rr_1024":[%s],"rr_ms":[%s],"format":"uint8","zone":%d,"hex":"%s"}\n'
            % (stamp(start + t), t, DEVICE, round(bpm), ",".join(str(v) for v in rr),
               ",".join(repr(v * 1000 / 1024) for v in rr), zone, payload.hex()))
    end = seconds * 1000 + 500
    out.append('{"type":"status","time":"%s","mono_ms":%d,"device":"%s","state":"stopped","detail":"%d measurements"}\n'
               % (stamp(start + end), end, DEVICE, seconds - 30))
    with open(path, "w") as f:
        f.writelines(out)


def generated(root, days, hours):
    """The data folder with DAYS recordings, made once per version of the generator and size."""
    source = inspect.getsource(recording) + inspect.getsource(stamp) + inspect.getsource(file_name)
    key = hashlib.sha256(source.encode()).hexdigest()[:12] + f"-{days}-{hours:g}"
    data = os.path.join(root, key)
    sessions = os.path.join(data, "hrm", "sessions")
    if os.path.isdir(sessions) and len(os.listdir(sessions)) == days:
        return data
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(sessions)
    began = time.perf_counter()
    for day in range(days):
        start = FIRST_START + day * DAY_MS
        recording(os.path.join(sessions, file_name(start)), start, int(hours * 3600), day)
        if sys.stderr.isatty():
            print(f"\rwriting recordings: {day + 1}/{days}", end="", file=sys.stderr)
    print(f"\rwrote {days} recordings in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    return data


def run(hrm, arguments, data):
    environment = dict(os.environ, XDG_DATA_HOME=data)
    began = time.perf_counter()
    result = subprocess.run([hrm] + arguments, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    elapsed = time.perf_counter() - began
    if result.returncode != 0:
        sys.exit(f"{hrm} {' '.join(arguments)}: exit {result.returncode}: {result.stderr}")
    return elapsed, result


def folder_bytes(sessions):
    return sum(os.path.getsize(os.path.join(sessions, n)) for n in os.listdir(sessions))


def reader(hrm, big, data, rounds, work):
    """MB/s of `hrm export` and `hrm hrv` reading one big recording (medians)."""
    size = os.path.getsize(big)
    figures = {}
    for label, arguments in (("export fit", ["export", big, "--format", "fit", "-o", os.path.join(work, "out.fit"),
                                             "--force"]),
                             ("export csv", ["export", big, "--format", "csv", "-o", os.path.join(work, "out.csv"),
                                             "--force"]),
                             ("hrv", ["hrv", big])):
        times = [run(hrm, arguments, data)[0] for _ in range(rounds)]
        figures[label] = (size / statistics.median(times) / 1e6, size / min(times) / 1e6)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--before", help="an older hrm, for the reader's before/after")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--hours", type=float, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", default=".build/bench-library")
    args = parser.parse_args()

    data = generated(os.path.abspath(args.cache), args.days, args.hours)
    sessions = os.path.join(data, "hrm", "sessions")
    index = os.path.join(data, "hrm", "library.sqlite3")
    total = folder_bytes(sessions)
    print(f"hrm sessions over {args.days} recordings of {args.hours:g} h at 1 Hz ({total / 1e6:.0f} MB):")

    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(index + suffix):
            os.unlink(index + suffix)
    elapsed, result = run(args.hrm, ["sessions"], data)
    listed = len(result.stdout.splitlines())
    if listed != args.days:
        sys.exit(f"hrm sessions listed {listed} sessions, not {args.days}: {result.stderr}")
    print(f"  indexing from nothing   {elapsed:6.2f} s   ({total / elapsed / 1e6:.0f} MB/s)")

    times = [run(args.hrm, ["sessions"], data)[0] for _ in range(args.rounds)]
    listing = statistics.median(times)
    print(f"  listing from the index  {listing * 1000:6.0f} ms  (median of {args.rounds}; target <= 500 ms: "
          f"{'PASS' if listing <= 0.5 else 'MISS'})")
    times = [run(args.hrm, ["sessions", "--json"], data)[0] for _ in range(args.rounds)]
    print(f"  listing, --json         {statistics.median(times) * 1000:6.0f} ms")

    # hrm trends over every day of the recordings (they start on FIRST_START, not today).
    span = int(time.time() * 1000 - FIRST_START) // DAY_MS + 1
    elapsed, result = run(args.hrm, ["trends", "--json", "--days", str(span)], data)
    if len(result.stdout.splitlines()) != span:
        sys.exit(f"hrm trends --days {span} printed {len(result.stdout.splitlines())} days: {result.stderr}")
    times = [run(args.hrm, ["trends", "--days", str(span)], data)[0] for _ in range(args.rounds)]
    print(f"  hrm trends --days {span}  {statistics.median(times) * 1000:5.0f} ms  (median of {args.rounds})")

    # What hrm record adds: one new recording indexed, against a listing with nothing new.
    work = os.path.join(data, "work")
    os.makedirs(work, exist_ok=True)
    extra_start = FIRST_START + args.days * DAY_MS
    extra = os.path.join(sessions, file_name(extra_start))
    costs = []
    try:
        for round_ in range(args.rounds):
            recording(extra, extra_start, int(args.hours * 3600), 10_000 + round_)
            with_one, _ = run(args.hrm, ["sessions"], data)
            without, _ = run(args.hrm, ["sessions"], data)
            costs.append(with_one - without)
            os.unlink(extra)
            run(args.hrm, ["sessions"], data)
    finally:
        if os.path.exists(extra):
            os.unlink(extra)
    print(f"  one new recording       {statistics.median(costs) * 1000:6.0f} ms  (what hrm record's update of the "
          "index costs: one file read, one transaction)")

    big = os.path.join(work, "a-day.jsonl")
    recording(big, FIRST_START, 24 * 3600, 99)
    print(f"reading one 24-hour recording ({os.path.getsize(big) / 1e6:.1f} MB), median and best of {args.rounds}:")
    after = reader(args.hrm, big, data, args.rounds, work)
    before = reader(args.before, big, data, args.rounds, work) if args.before else None
    for label in after:
        median, best = after[label]
        line = f"  {label:11} {median:6.0f} MB/s (best {best:.0f})"
        if before:
            line += f"   before: {before[label][0]:.0f} MB/s (best {before[label][1]:.0f}), {median / before[label][0]:.1f}x"
        print(line)
    if args.before:
        # The older hrm's listing read every file, every time.
        elapsed, _ = run(args.before, ["sessions"], data)
        print(f"  hrm sessions of the older hrm (every file read): {elapsed:.2f} s "
              f"({total / elapsed / 1e6:.0f} MB/s)")


if __name__ == "__main__":
    main()
