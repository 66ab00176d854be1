#!/usr/bin/env python3
"""hrm watch under load: `make bench-watch` (see README.md beside this file).

Streaming: hrm-sim sends 200 notifications/s for 10 s; `hrm watch --json` prints them. Each frame
carries its sequence number as a UINT16 heart rate, so a line on hrm's stdout is matched to the
simulator's send (its log's `mono_ns`, CLOCK_MONOTONIC just before the send). The harness reads
hrm's stdout in a tight loop and stamps each line with CLOCK_MONOTONIC as it arrives.

  latency    line read by the harness - frame sent by the simulator (median, p90, p99, max)
  CPU        hrm's CPU time (all threads, /proc/PID/task/*/schedstat, ns) from its first
             measurement line to its last, per notification in that window
  peak RSS   hrm's peak resident set, the whole run, connection set-up included: /usr/bin/time's
             %M, not this harness's ru_maxrss, which the kernel takes as at least the RSS of the
             Python process that forked hrm (12.8 MB for /usr/bin/python3)

Idle: `hrm watch --json` against a 1 Hz strap; hrm's CPU over 60 s of streaming, as % of a core.

Run as hrm-sim's command (`--inner`), or without it to drive the rounds and print the report.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchkit import cpu_ns, free_port, peak_rss_kib, percentile, time_child  # noqa: E402

ADDRESS = "D2:4B:7E:10:20:40"
TARGETS = {"p99_ms": 0.15, "cpu_us": 15.0, "rss_mib": 10.0, "idle_pct": 0.1}


RR_FRAMES = False
RECORD = False
# --osc: hrm sends OSC to a UDP socket this harness drains (watch_bench.py --osc).
OSC_PORT = None
SHARE = False
# --relay N: hrm relays the strap (--relay) to N consumers hrm-sim plays; their receipts are timed.
RELAY = 0


def rr_ticks(n):
    """A clean RR interval for frame n, in 1/1024 s: 800 ms with a breathing swing of +-40 ms."""
    return round((800 + 40 * math.sin(2 * math.pi * n / 4.5)) * 1.024)


def scenario(rate, seconds, sequence):
    """One known strap; `sequence`: UINT16 frames numbered 1..N (else BlueZ's basic generator);
    with --rr each frame also carries one RR interval, so that watch's HRV runs per frame."""
    device = {
        "address": ADDRESS, "name": "Bench Strap", "rssi": -50, "uuids": ["180d"], "known": True,
        "battery": None, "mtu": 247,
    }
    if sequence:
        count = int(rate * seconds) + 2 * rate
        if RR_FRAMES:
            frames = ["11%02x%02x%02x%02x" % (n & 0xFF, n >> 8, rr_ticks(n) & 0xFF, rr_ticks(n) >> 8)
                      for n in range(1, count + 1)]
        else:
            frames = ["01%02x%02x" % (n & 0xFF, n >> 8) for n in range(1, count + 1)]
        device["heartRate"] = {"mode": "frames", "interval": 1.0 / rate, "frames": frames}
    else:
        device["heartRate"] = {"mode": "realistic", "interval": 1.0 / rate, "seed": 3}
    consumers = [{"address": "C0:FF:EE:00:01:%02X" % (n + 1), "connectAfter": 0.2, "read": False}
                 for n in range(RELAY)]
    return {"description": "benchmark", "devices": [device], "consumers": consumers}


def osc_drain():
    """A UDP socket on loopback that reads and drops every datagram, on a thread; its port."""
    import socket
    import threading
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))

    def drain():
        while True:
            sink.recv(65536)

    threading.Thread(target=drain, daemon=True).start()
    return sink.getsockname()[1]


def inner(args):
    """Runs hrm watch (inside hrm-sim), records each line's arrival and hrm's CPU, writes JSON."""
    command = [args.hrm, "watch", ADDRESS, "--json", "--duration", str(args.duration)]
    if args.record_to:
        command += ["--record", args.record_to]
    if args.osc_to:
        command += ["--osc", args.osc_to]
    if args.share:
        command += ["--share"]
    if args.relay:
        command += ["--relay"]
    # A child's ru_maxrss counts the memory of the process it was forked from (the kernel keeps the
    # larger of the two at exec), here this Python's 12.8 MB: /usr/bin/time, a small C program,
    # forks hrm and reports hrm's own peak.
    rss_path = args.out + ".rss"
    command = ["/usr/bin/time", "-f", "%M", "-o", rss_path] + command
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    hrm_pid = None
    fd = child.stdout.fileno()
    arrivals = []  # (mono_ns, sequence or bpm)
    first_cpu = last_cpu = None
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        stamp = time.monotonic_ns()
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if b'"measurement"' not in line:
                continue
            event = json.loads(line)
            arrivals.append((stamp, event["bpm"]))
            if hrm_pid is None:
                hrm_pid = time_child(child.pid)
            sample = cpu_ns(hrm_pid)
            if first_cpu is None:
                first_cpu = (sample, len(arrivals))
            last_cpu = (sample, len(arrivals))
    _, status, usage = os.wait4(child.pid, 0)
    stderr = child.stderr.read().decode(errors="replace")
    json.dump(
        {
            "status": os.waitstatus_to_exitcode(status), "stderr": stderr[-2000:], "arrivals": arrivals,
            "first_cpu": first_cpu, "last_cpu": last_cpu, "maxrss_kib": peak_rss_kib(rss_path),
            "cpu_total_s": usage.ru_utime + usage.ru_stime,
        },
        open(args.out, "w"),
    )
    return 0


def run_round(hrm, sim, rate, seconds, sequence):
    with tempfile.TemporaryDirectory() as work:
        scenario_path = os.path.join(work, "scenario.json")
        json.dump(scenario(rate, seconds + 1, sequence), open(scenario_path, "w"))
        log, out = os.path.join(work, "sim.jsonl"), os.path.join(work, "out.json")
        env = dict(os.environ, XDG_STATE_HOME=work, NO_COLOR="1")
        subprocess.run(
            [sim, "--scenario", scenario_path, "--log", log, "--", sys.executable, __file__, "--inner",
             "--hrm", hrm, "--out", out, "--duration", str(seconds)]
            + (["--record-to", os.path.join(work, "recording.jsonl")] if RECORD else [])
            + (["--osc-to", f"127.0.0.1:{OSC_PORT}"] if OSC_PORT else [])
            + (["--share"] if SHARE else [])
            + (["--relay", str(RELAY)] if RELAY else []),
            env=env, check=False,
        )
        result = json.load(open(out))
        records = [json.loads(line) for line in open(log)]
        sent = [e for e in records if e.get("event") == "notify"]
        # What the relay's consumers received of 0x2A37, when (hrm-sim's clock, as `sent`).
        result["relayed"] = [
            (e["consumer"], e["hex"], e["mono_ns"]) for e in records
            if e.get("event") == "consumer-value" and e.get("uuid", "").startswith("00002a37")
        ]
        return result, sent


def streaming(hrm, sim, rounds, rate=200, seconds=10):
    rows = []
    for n in range(rounds):
        result, sent = run_round(hrm, sim, rate, seconds, sequence=True)
        if result["status"] != 0:
            sys.exit(f"round {n + 1}: hrm exited {result['status']}: {result['stderr']}")
        sent_at = {}
        for event in sent:
            frame = bytes.fromhex(event["hex"])
            sent_at[frame[1] | frame[2] << 8] = event["mono_ns"]
        sequences = [seq for _, seq in result["arrivals"]]
        latencies = [(stamp - sent_at[seq]) / 1e6 for stamp, seq in result["arrivals"] if seq in sent_at]
        (cpu0, n0), (cpu1, n1) = result["first_cpu"], result["last_cpu"]
        # The strap's send to each consumer's receipt, every relayed frame of every consumer.
        relayed = [(mono - sent_at[int.from_bytes(bytes.fromhex(value)[1:3], "little")]) / 1e6
                   for _, value, mono in result["relayed"]
                   if int.from_bytes(bytes.fromhex(value)[1:3], "little") in sent_at]
        rows.append({
            "via": sorted({e["via"] for e in sent}),
            "sent": len(sent), "received": len(sequences),
            "duplicates": len(sequences) - len(set(sequences)),
            # Sent before hrm's last line yet never printed (the last sends race the duration).
            "lost": len([s for s in sent_at if s < max(sequences) and s not in set(sequences)]),
            "median_ms": statistics.median(latencies), "p90_ms": percentile(latencies, 0.90),
            "p99_ms": percentile(latencies, 0.99), "max_ms": max(latencies),
            "cpu_us": (cpu1 - cpu0) / 1e3 / max(n1 - n0, 1),
            "cpu_total_s": result["cpu_total_s"], "rss_mib": result["maxrss_kib"] / 1024,
            "relayed": len(relayed), "consumers": len({c for c, _, _ in result["relayed"]}),
            "relay_median_ms": statistics.median(relayed) if relayed else None,
            "relay_p99_ms": percentile(relayed, 0.99) if relayed else None,
        })
        r = rows[-1]
        print(
            f"  round {n + 1}: via {','.join(r['via'])}  {r['received']}/{r['sent']} lines, lost {r['lost']}, "
            f"dup {r['duplicates']}  latency median {r['median_ms']:.3f} p90 {r['p90_ms']:.3f} "
            f"p99 {r['p99_ms']:.3f} max {r['max_ms']:.3f} ms  CPU {r['cpu_us']:.1f} us/notification  "
            f"RSS {r['rss_mib']:.1f} MiB", flush=True)
        if r["relayed"]:
            print(f"           relayed {r['relayed']} values to {r['consumers']} consumers: strap to consumer "
                  f"median {r['relay_median_ms']:.3f} p99 {r['relay_p99_ms']:.3f} ms", flush=True)
    return rows


def idle(hrm, sim, seconds):
    result, _ = run_round(hrm, sim, 1, seconds + 2, sequence=False)
    (cpu0, n0), (cpu1, n1) = result["first_cpu"], result["last_cpu"]
    window_s = (result["arrivals"][-1][0] - result["arrivals"][0][0]) / 1e9
    percent = (cpu1 - cpu0) / 1e9 / window_s * 100
    print(f"  idle: {n1 - n0} notifications over {window_s:.1f} s, {(cpu1 - cpu0) / 1e6:.1f} ms CPU = "
          f"{percent:.3f} % of a core", flush=True)
    return percent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--idle-seconds", type=float, default=60)
    parser.add_argument("--record", action="store_true",
                        help="hrm records the session too (--record into the round's folder)")
    parser.add_argument("--record-to", help=argparse.SUPPRESS)
    parser.add_argument("--osc", action="store_true",
                        help="hrm sends --osc to a UDP socket the harness drains")
    parser.add_argument("--osc-to", help=argparse.SUPPRESS)
    parser.add_argument("--share", action="store_true",
                        help="hrm subscribes by StartNotify (--share) instead of AcquireNotify")
    parser.add_argument("--relay", type=int, default=0, metavar="N",
                        help="hrm relays the strap (--relay) to N consumers that hrm-sim plays")
    parser.add_argument("--rate", type=int, default=200, help="notifications per second")
    parser.add_argument("--seconds", type=float, default=10, help="streaming time of a round")
    parser.add_argument("--no-idle", action="store_true", help="skip the 1 Hz idle measurement")
    parser.add_argument("--rr", action="store_true",
                        help="frames carry an RR interval each (watch's HRV works per frame)")
    parser.add_argument("--label", default="hrm watch --json",
                        help="what --hrm is, for the report (the floor reader: see floor/)")
    args = parser.parse_args()
    global RR_FRAMES, RECORD, OSC_PORT, SHARE, RELAY
    RR_FRAMES = args.rr
    RECORD = args.record
    SHARE = args.share
    RELAY = args.relay
    if args.inner:
        return inner(args)
    if args.osc:
        OSC_PORT = osc_drain()

    relaying = f", relayed to {RELAY} consumers" if RELAY else ""
    print(f"{args.label}{relaying}, {args.rate} notifications/s for {args.seconds:g} s, {args.rounds} rounds:",
          flush=True)
    rows = streaming(args.hrm, args.sim, args.rounds, args.rate, args.seconds)
    idle_pct = None
    if not args.no_idle:
        print(f"{args.label}, 1 notification/s for {args.idle_seconds:.0f} s:", flush=True)
        idle_pct = idle(args.hrm, args.sim, args.idle_seconds)

    medians = {key: statistics.median(r[key] for r in rows) for key in ("median_ms", "p99_ms", "cpu_us", "rss_mib")}
    losses = sum(r["lost"] + r["duplicates"] for r in rows)
    print("\nmedians over rounds            measured   target")
    checks = [
        ("latency median (ms)", medians["median_ms"], None),
        ("latency p99 (ms)", medians["p99_ms"], TARGETS["p99_ms"]),
        ("CPU per notification (us)", medians["cpu_us"], TARGETS["cpu_us"]),
        ("peak RSS (MiB)", medians["rss_mib"], TARGETS["rss_mib"]),
    ]
    if idle_pct is not None:
        checks.append(("idle CPU (% of a core)", idle_pct, TARGETS["idle_pct"]))
    if RELAY:
        relayed = [r for r in rows if r["relayed"]]
        checks.append(("relay median (ms)", statistics.median(r["relay_median_ms"] for r in relayed), None))
        checks.append(("relay p99 (ms)", statistics.median(r["relay_p99_ms"] for r in relayed), None))
    for name, value, target in checks:
        verdict = "" if target is None else ("PASS" if value <= target else "MISS")
        print(f"  {name:28} {value:9.3f}   {'' if target is None else f'<= {target}'}  {verdict}")
    print(f"  lost or duplicated lines: {losses}")
    return 1 if losses else 0


if __name__ == "__main__":
    sys.exit(main())
