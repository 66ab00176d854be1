#!/usr/bin/env python3
"""hrm watch for a long time: `make bench-soak` (default 30 minutes; see README.md beside this file).

One strap sends 50 notifications/s (each frame numbered, as UINT16 heart rate), and its link
drops for 2 s every 5 minutes. `hrm watch --json` runs through it all; every 10 s the harness
samples hrm's resident memory (VmRSS) and its open file descriptors. At the end it reports the
first, last, lowest and highest of each (after a 60 s warm-up), the drops and reconnects hrm
reported, and whether every notification the simulator sent (its log) was printed once: frames
that fall due while the link is down are not sent, so they are not expected.

Run as hrm-sim's command (`--inner`), or without it to set up the scenario and print the report.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ADDRESS = "D2:4B:7E:10:20:50"


def scenario(rate, seconds, drop_every, drop_for):
    # Each frame is numbered: the low 16 bits as a UINT16 heart rate, the rest as one RR interval.
    count = int(rate * (seconds + 60))
    frames = ["11%02x%02x%02x%02x" % (n & 0xFF, (n >> 8) & 0xFF, (n >> 16) & 0xFF, n >> 24)
              for n in range(1, count + 1)]
    drops = [{"at": t, "for": drop_for} for t in range(drop_every, int(seconds), drop_every)]
    device = {
        "address": ADDRESS, "name": "Soak Strap", "rssi": -50, "uuids": ["180d"], "known": True,
        "battery": None, "heartRate": {"mode": "frames", "interval": 1.0 / rate, "frames": frames},
        "drops": drops,
    }
    return {"description": "soak", "devices": [device]}


def sample(pid):
    """(VmRSS in KiB, open fds) of `pid`, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return None


def inner(args):
    command = [args.hrm, "watch", ADDRESS, "--json", "--duration", str(args.seconds)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    samples = []
    done = threading.Event()

    def sampler():
        start = time.monotonic()
        while not done.wait(args.every):
            value = sample(child.pid)
            if value:
                samples.append((round(time.monotonic() - start, 1), *value))

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    sequences, states = [], []
    for line in child.stdout:
        event = json.loads(line)
        if event.get("type") == "measurement":
            sequences.append(event["bpm"] + (event["rr_1024"][0] << 16 if event["rr_1024"] else 0))
        elif event.get("type") == "status":
            states.append(event["state"])
    child.wait()
    done.set()
    thread.join()
    with open(args.out, "w") as f:
        json.dump({"status": child.returncode, "sequences": sequences, "states": states, "samples": samples}, f)


def outer(args):
    work = tempfile.mkdtemp(prefix="hrm-soak-")
    path = os.path.join(work, "scenario.json")
    with open(path, "w") as f:
        json.dump(scenario(args.rate, args.seconds, args.drop_every, args.drop_for), f)
    out = os.path.join(work, "result.json")
    log = os.path.join(work, "sim.jsonl")
    inner_command = [sys.executable, os.path.abspath(__file__), "--inner", "--hrm", args.hrm, "--out", out,
                     "--seconds", str(args.seconds), "--every", str(args.every)]
    subprocess.run([args.sim, "--scenario", path, "--log", log, "--"] + inner_command, check=True)
    with open(out) as f:
        result = json.load(f)
    # What the simulator sent (frames due while nobody listened are skipped, not sent).
    sent = set()
    with open(log) as f:
        for line in f:
            if '"notify"' in line:
                entry = json.loads(line)
                if entry.get("sent"):
                    frame = bytes.fromhex(entry["hex"])
                    sent.add(int.from_bytes(frame[1:3], "little") + (int.from_bytes(frame[3:5], "little") << 16))
    sequences = result["sequences"]
    unique = set(sequences)
    duplicates = len(sequences) - len(unique)
    gaps = len(sent - unique)
    warm = [s for s in result["samples"] if s[0] >= 60] or result["samples"]
    rss = [s[1] for s in warm]
    fds = [s[2] for s in warm]
    drops = result["states"].count("disconnected")
    print(f"soak: hrm watch --json, {args.rate} notifications/s for {args.seconds / 60:g} min, "
          f"link dropped for {args.drop_for} s every {args.drop_every / 60:g} min")
    print(f"  exit status {result['status']}; {len(sent)} notifications sent, {len(sequences)} measurements "
          f"printed, {gaps} sent but not printed, {duplicates} printed twice")
    print(f"  drops reported {drops}, reconnects {result['states'].count('reconnecting')}")
    if rss:
        print(f"  RSS after warm-up (KiB): first {rss[0]}, last {rss[-1]}, min {min(rss)}, max {max(rss)} "
              f"over {len(rss)} samples every {args.every:g} s")
        print(f"  open fds after warm-up: first {fds[0]}, last {fds[-1]}, min {min(fds)}, max {max(fds)}")
    growth = (rss[-1] - rss[0]) if rss else 0
    ok = result["status"] == 0 and duplicates == 0 and gaps == 0 and (not fds or max(fds) - min(fds) <= 2)
    print(f"  RSS growth over the run: {growth} KiB")
    print("soak: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=int, default=50)
    parser.add_argument("--drop-every", type=int, default=300, help="seconds between link drops")
    parser.add_argument("--drop-for", type=float, default=2)
    parser.add_argument("--every", type=float, default=10, help="seconds between samples")
    args = parser.parse_args()
    if args.seconds is None:
        args.seconds = args.minutes * 60
    if args.inner:
        inner(args)
        return 0
    return outer(args)


if __name__ == "__main__":
    sys.exit(main())
