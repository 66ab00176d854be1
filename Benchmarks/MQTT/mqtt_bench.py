#!/usr/bin/env python3
"""hrm watch --mqtt at scale: `make bench-mqtt` (see README.md beside this file).

One Mosquitto broker on a free loopback port; hrm-sim plays 20 straps at 4 Hz each; four
`hrm watch` processes watch five straps each and publish to the broker (--mqtt-id bench-N). Each
frame carries its sequence number as a UINT16 heart rate, so a message a paho-mqtt subscriber
receives is matched to the simulator's send (its log's `mono_ns`, CLOCK_MONOTONIC just before
the send); the subscriber stamps each message with CLOCK_MONOTONIC as paho hands it over.

  latency   message received by the subscriber - frame sent by hrm-sim (median, p99, max)
  CPU       the hrm processes' CPU time (all threads, /proc/PID/task/*/schedstat) over the
            steady part of the run, per notification sent meanwhile; the same run without
            --mqtt, interleaved, gives what MQTT adds
  lost      frames sent before the last one received that never arrived

Run as hrm-sim's command (`--inner`), or without it to drive the rounds and print the report.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchkit import cpu_ns, free_port, percentile  # noqa: E402

STRAPS = 20
RATE = 4
PROCESSES = 4
PREFIX = "bench"


def address(n):
    return "C0:FF:EE:00:02:%02X" % n


def scenario(seconds):
    count = int(RATE * (seconds + 3))
    devices = []
    for n in range(1, STRAPS + 1):
        frames = ["01%02x%02x" % (k & 0xFF, k >> 8) for k in range(1, count + 1)]
        devices.append({
            "address": address(n), "name": "Bench %02d" % n, "rssi": -50, "uuids": ["180d"], "known": True,
            "battery": None, "mtu": 247,
            "heartRate": {"mode": "frames", "interval": 1.0 / RATE, "frames": frames},
        })
    return {"description": "MQTT benchmark: 20 straps at 4 Hz", "devices": devices}


def inner(args):
    received = []  # (mono_ns, device level, sequence)
    if args.mqtt:
        import paho.mqtt.client as mqtt
        subscribed = threading.Event()
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-subscriber")

        def on_connect(c, userdata, flags, reason, properties):
            c.subscribe(f"{PREFIX}/+/+/measurement", qos=1)

        def on_message(c, userdata, message):
            stamp = time.monotonic_ns()
            device = message.topic.split("/")[2]
            received.append((stamp, device, json.loads(message.payload)["bpm"]))

        client.on_connect = on_connect
        client.on_subscribe = lambda *a: subscribed.set()
        client.on_message = on_message
        client.connect("127.0.0.1", args.port)
        client.loop_start()
        if not subscribed.wait(10):
            sys.exit("the subscriber could not subscribe")
    children = []
    for p in range(PROCESSES):
        straps = [address(n) for n in range(1, STRAPS + 1) if (n - 1) % PROCESSES == p]
        command = [args.hrm, "watch", *straps, "--json", "--duration", str(args.duration), "--hrv-every", "0"]
        if args.mqtt:
            command += ["--mqtt", f"mqtt://127.0.0.1:{args.port}", "--mqtt-id", f"bench-{p}",
                        "--mqtt-prefix", PREFIX, "--no-ha-discovery"]
        children.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    start = time.monotonic_ns()
    time.sleep(4)
    t0 = time.monotonic_ns()
    cpu0 = sum(cpu_ns(c.pid) for c in children)
    time.sleep(max(args.duration - 6, 1))
    t1 = time.monotonic_ns()
    cpu1 = sum(cpu_ns(c.pid) for c in children)
    rss = []
    statuses = []
    errors = ""
    for child in children:
        _, status, usage = os.wait4(child.pid, 0)
        statuses.append(os.waitstatus_to_exitcode(status))
        rss.append(usage.ru_maxrss)
        errors += child.stderr.read().decode(errors="replace")[-500:]
    time.sleep(0.5)
    json.dump({"statuses": statuses, "stderr": errors, "received": received, "window": [t0, t1],
               "cpu_ns": cpu1 - cpu0, "start": start, "maxrss_kib": rss}, open(args.out, "w"))
    return 0


def run_round(hrm, sim, python, seconds, mqtt):
    with tempfile.TemporaryDirectory() as work:
        port = free_port()
        broker = None
        if mqtt:
            conf = os.path.join(work, "mosquitto.conf")
            open(conf, "w").write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                                  "max_queued_messages 100000\n")
            broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        scenario_path = os.path.join(work, "scenario.json")
        json.dump(scenario(seconds), open(scenario_path, "w"))
        log, out = os.path.join(work, "sim.jsonl"), os.path.join(work, "out.json")
        env = dict(os.environ, XDG_STATE_HOME=work, NO_COLOR="1")
        subprocess.run(
            [sim, "--scenario", scenario_path, "--log", log, "--", python, __file__, "--inner", "--hrm", hrm,
             "--out", out, "--duration", str(seconds), "--port", str(port)] + (["--mqtt"] if mqtt else []),
            env=env, check=False)
        if broker:
            broker.terminate()
            broker.wait()
        result = json.load(open(out))
        sent = [json.loads(line) for line in open(log)]
        return result, [e for e in sent if e.get("event") == "notify" and e.get("sent", True)]


def summarise(result, sent, mqtt):
    if any(result["statuses"]):
        sys.exit(f"hrm exited {result['statuses']}: {result['stderr']}")
    t0, t1 = result["window"]
    in_window = [e for e in sent if t0 <= e["mono_ns"] <= t1]
    row = {"cpu_us": result["cpu_ns"] / 1e3 / max(len(in_window), 1), "sent": len(sent),
           "rss_mib": max(result["maxrss_kib"]) / 1024}
    if mqtt:
        sent_at = {}
        for e in sent:
            level = e["path"].split("/")[4][4:].replace("_", "").lower()
            frame = bytes.fromhex(e["hex"])
            sent_at[(level, frame[1] | frame[2] << 8)] = e["mono_ns"]
        keys = [(d, s) for _, d, s in result["received"]]
        latencies = [(stamp - sent_at[(d, s)]) / 1e6 for stamp, d, s in result["received"] if (d, s) in sent_at]
        last = {}
        for d, s in keys:
            last[d] = max(last.get(d, 0), s)
        got = set(keys)
        row.update({
            "received": len(keys), "duplicates": len(keys) - len(got),
            "lost": len([k for k in sent_at if k[1] < last.get(k[0], 0) and k not in got]),
            "median_ms": statistics.median(latencies), "p99_ms": percentile(latencies, 0.99),
            "max_ms": max(latencies),
        })
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--mqtt", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=float, default=20)
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--python", default=sys.executable, help="an interpreter with paho-mqtt")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    print(f"hrm watch --mqtt: {STRAPS} straps at {RATE} Hz, {PROCESSES} hrm processes, {args.duration:g} s "
          f"a round, {args.rounds} rounds (with and without --mqtt, interleaved)", flush=True)
    rows = {True: [], False: []}
    for n in range(args.rounds):
        for mqtt in (True, False):
            result, sent = run_round(args.hrm, args.sim, args.python, args.duration, mqtt)
            row = summarise(result, sent, mqtt)
            rows[mqtt].append(row)
            if mqtt:
                print(f"  round {n + 1} --mqtt: {row['received']}/{row['sent']} received, lost {row['lost']}, "
                      f"dup {row['duplicates']}  latency median {row['median_ms']:.2f} p99 {row['p99_ms']:.2f} "
                      f"max {row['max_ms']:.2f} ms  CPU {row['cpu_us']:.1f} us/notification  "
                      f"RSS {row['rss_mib']:.1f} MiB", flush=True)
            else:
                print(f"  round {n + 1} plain: CPU {row['cpu_us']:.1f} us/notification  RSS {row['rss_mib']:.1f} MiB",
                      flush=True)
    med = lambda key, mqtt: statistics.median(r[key] for r in rows[mqtt])
    print(f"medians: latency {med('median_ms', True):.2f} ms, p99 {med('p99_ms', True):.2f} ms; "
          f"CPU per notification {med('cpu_us', True):.1f} us with --mqtt, {med('cpu_us', False):.1f} us without "
          f"(ratio {med('cpu_us', True) / med('cpu_us', False):.2f}); peak RSS {med('rss_mib', True):.1f} MiB with, "
          f"{med('rss_mib', False):.1f} MiB without; lost {sum(r['lost'] for r in rows[True])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
