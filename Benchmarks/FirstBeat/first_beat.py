#!/usr/bin/env python3
"""Time to the first beat: `make bench-first-beat` (see README.md beside this file).

hrm watch and a plain bleak client, each against its own hrm-sim playing one strap that drops its
link 5 s into the run and is back 2 s later. From hrm-sim's log (every D-Bus call with its time):

  start -> subscribed    the client started -> its first AcquireNotify or StartNotify
  back -> subscribed     the strap advertising again -> the first AcquireNotify or StartNotify after

Neither client knows the strap beforehand: both scan for the Heart Rate service; bleak takes the
first advertiser it sees, hrm the strongest once nothing new came for 0.3 s (or at once when one is
strong). A third client, "hrm again", is hrm as every run after the first finds it: the strap
remembered from the last run, taken the moment it is seen. Rounds alternate the three; medians and
ratios are reported (target: hrm <= 0.8 x bleak, and back -> subscribed under 1 s).

With --before OTHER_HRM, the rounds also run OTHER_HRM (an older build) as "hrm" and "hrm again",
alternated with the others: before and after figures from the same session.
"""
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

DROP_AT, DROP_FOR = 5.0, 2.0
SUBSCRIBE = {"AcquireNotify", "StartNotify"}


def scenario():
    return {
        "description": "first-beat benchmark: one strap, a 2 s drop 5 s in",
        "devices": [{
            "address": "C0:FF:EE:00:07:01", "name": "Bench HRM", "rssi": -64, "uuids": ["180d", "180f"],
            "battery": 80, "heartRate": {"bpm": 70, "seed": 7}, "drops": [{"at": DROP_AT, "for": DROP_FOR}],
        }],
    }


async def bleak_client():
    """A straightforward bleak client: scan for the service, connect, subscribe; after the drop,
    connect again (BlueZ holds the Connect until the strap is back) and subscribe again."""
    from bleak import BleakClient, BleakScanner
    service = "0000180d-0000-1000-8000-00805f9b34fb"
    measurement = "00002a37-0000-1000-8000-00805f9b34fb"
    device = await BleakScanner.find_device_by_filter(lambda d, ad: service in ad.service_uuids, timeout=10)
    if device is None:
        sys.exit("bleak: no strap found")
    dropped = asyncio.Event()
    client = BleakClient(device, disconnected_callback=lambda _: dropped.set())
    await client.connect()
    await client.start_notify(measurement, lambda *_: None)
    await asyncio.wait_for(dropped.wait(), 20)
    for _ in range(20):
        try:
            await client.connect(timeout=20)
            break
        except Exception:
            await asyncio.sleep(0.1)
    await client.start_notify(measurement, lambda *_: None)
    await asyncio.sleep(1)
    await client.disconnect()


def inner(args):
    """As hrm-sim's command: note when the client starts (CLOCK_MONOTONIC), run it."""
    with open(args.out, "w") as f:
        json.dump({"start_ns": time.monotonic_ns()}, f)
    if args.client == "bleak":
        asyncio.run(bleak_client())
        return 0
    return subprocess.run([args.hrm, "watch", "--json", "--duration", "10"], stdout=subprocess.DEVNULL).returncode


def run(client, hrm, sim, python):
    client = client.removesuffix(" before")
    with tempfile.TemporaryDirectory() as work:
        path, log, out = (os.path.join(work, n) for n in ("s.json", "sim.jsonl", "out.json"))
        json.dump(scenario(), open(path, "w"))
        env = dict(os.environ, XDG_STATE_HOME=work)
        if client == "hrm again":
            os.makedirs(os.path.join(work, "hrm"))
            open(os.path.join(work, "hrm", "last-device"), "w").write(scenario()["devices"][0]["address"] + "\n")
        subprocess.run([sim, "--scenario", path, "--log", log, "--", python, __file__, "--inner", "--client",
                        "bleak" if client == "bleak" else "hrm",
                        "--hrm", hrm, "--out", out], env=env, check=False, timeout=60)
        start_ns = json.load(open(out))["start_ns"]
        events = [json.loads(line) for line in open(log)]
        # The log's `t` is seconds from hrm-sim's start; a notification carries both clocks.
        notify = next(e for e in events if e.get("event") == "notify" and "mono_ns" in e)
        offset = notify["mono_ns"] / 1e9 - notify["t"]
        start = start_ns / 1e9 - offset
        subscribes = [e["t"] for e in events if e.get("event") == "call" and e.get("member") in SUBSCRIBE]
        drop = next(e["t"] for e in events if e.get("event") == "drop")
        back = drop + DROP_FOR
        after = [t for t in subscribes if t > drop]
        return subscribes[0] - start, (after[0] - back) if after else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--python", default=sys.executable, help="an interpreter with bleak")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="another hrm binary (an older build) to alternate with --hrm")
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    rows = {"hrm": [], "hrm again": [], "bleak": []}
    if args.before:
        rows = {"hrm before": [], "hrm": [], "hrm again before": [], "hrm again": [], "bleak": []}
    for n in range(args.rounds):
        for client in rows:
            hrm = args.before if client.endswith(" before") else args.hrm
            first, back = run(client, hrm, args.sim, args.python)
            rows[client].append((first, back))
            print(f"  round {n + 1} {client:{16 if args.before else 9}}: start -> subscribed {first:.3f} s, strap back -> subscribed {back:.3f} s",
                  flush=True)
    med = {c: (statistics.median(r[0] for r in rows[c]), statistics.median(r[1] for r in rows[c])) for c in rows}
    for client in (c for c in rows if c != "bleak"):
        print(f"medians, {client} against bleak: start -> subscribed {med[client][0]:.3f} s against "
              f"{med['bleak'][0]:.3f} s (ratio {med[client][0] / med['bleak'][0]:.2f}); strap back -> subscribed "
              f"{med[client][1]:.3f} s against {med['bleak'][1]:.3f} s (ratio {med[client][1] / med['bleak'][1]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
