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
  wake-ups  context switches of the hrm processes' threads (voluntary_ctxt_switches in
            /proc/PID/task/*/status) over the same window, per notification
  peak RSS  each hrm's own peak resident set: hrm runs under /usr/bin/time, whose %M is hrm's
            alone (this harness's ru_maxrss of a child is at least the RSS of the Python process
            that forked it, about 12.8 MB)

--baseline HRM (repeatable) runs the rounds with --mqtt for each build given and --hrm, interleaved
(before and after a change). --syscalls attaches `strace -c -f` to each hrm over the window instead of
measuring CPU, and prints the system calls per notification.

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
from benchkit import cpu_ns, free_port, peak_rss_kib, percentile, switches, time_child  # noqa: E402

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
        # A child's ru_maxrss counts the memory of the process it was forked from (the kernel keeps
        # the larger of the two at exec), here this Python's: /usr/bin/time, a small C program,
        # forks hrm and reports hrm's own peak.
        command = ["/usr/bin/time", "-f", "%M", "-o", f"{args.out}.rss{p}"] + command
        children.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    start = time.monotonic_ns()
    time.sleep(4)
    pids = [time_child(c.pid) for c in children]
    tracers = []
    if args.syscalls:
        tracers = [subprocess.Popen(["strace", "-c", "-f", "-o", f"{args.out}.strace{n}", "-p", str(pid)],
                                    stderr=subprocess.DEVNULL) for n, pid in enumerate(pids)]
    t0 = time.monotonic_ns()
    cpu0 = sum(cpu_ns(pid) for pid in pids)
    switches0 = sum(switches(pid) for pid in pids)
    time.sleep(max(args.duration - 6, 1))
    t1 = time.monotonic_ns()
    cpu1 = sum(cpu_ns(pid) for pid in pids)
    switches1 = sum(switches(pid) for pid in pids)
    for tracer in tracers:
        tracer.send_signal(2)
        tracer.wait()
    syscalls = {}
    for n in range(len(tracers)):
        for name, count in strace_counts(f"{args.out}.strace{n}").items():
            syscalls[name] = syscalls.get(name, 0) + count
    rss = []
    statuses = []
    errors = ""
    for p, child in enumerate(children):
        _, status, _ = os.wait4(child.pid, 0)
        statuses.append(os.waitstatus_to_exitcode(status))
        rss.append(peak_rss_kib(f"{args.out}.rss{p}"))
        errors += child.stderr.read().decode(errors="replace")[-500:]
    time.sleep(0.5)
    json.dump({"statuses": statuses, "stderr": errors, "received": received, "window": [t0, t1],
               "cpu_ns": cpu1 - cpu0, "switches": switches1 - switches0, "syscalls": syscalls, "start": start,
               "maxrss_kib": rss}, open(args.out, "w"))
    return 0


def strace_counts(path):
    """System call -> calls, from `strace -c`'s table."""
    counts = {}
    for line in open(path):
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            counts[fields[-1]] = int(fields[3])
    return counts


def run_round(hrm, sim, python, seconds, mqtt, syscalls=False):
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
             "--out", out, "--duration", str(seconds), "--port", str(port)] + (["--mqtt"] if mqtt else [])
            + (["--syscalls"] if syscalls else []),
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
    notifications = max(len(in_window), 1)
    row = {"cpu_us": result["cpu_ns"] / 1e3 / notifications, "sent": len(sent),
           "rss_mib": max(result["maxrss_kib"]) / 1024, "wakeups": result["switches"] / notifications,
           "syscalls": {name: count / notifications for name, count in result["syscalls"].items()}}
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


def describe(row, label):
    if "received" not in row:
        return (f"  {label}: CPU {row['cpu_us']:.1f} us/notification  wake-ups {row['wakeups']:.2f}/notification  "
                f"RSS {row['rss_mib']:.1f} MiB")
    return (f"  {label}: {row['received']}/{row['sent']} received, lost {row['lost']}, dup {row['duplicates']}  "
            f"latency median {row['median_ms']:.2f} p99 {row['p99_ms']:.2f} max {row['max_ms']:.2f} ms  "
            f"CPU {row['cpu_us']:.1f} us/notification  wake-ups {row['wakeups']:.2f}/notification  "
            f"RSS {row['rss_mib']:.1f} MiB")


def medians(rows, label):
    med = lambda key: statistics.median(r[key] for r in rows)
    text = f"{label}: CPU {med('cpu_us'):.1f} us/notification, wake-ups {med('wakeups'):.2f}, RSS {med('rss_mib'):.1f} MiB"
    if "received" in rows[0]:
        text += (f", latency {med('median_ms'):.2f} ms, p99 {med('p99_ms'):.2f} ms, "
                 f"lost {sum(r['lost'] for r in rows)}, duplicates {sum(r['duplicates'] for r in rows)}")
    return text


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
    parser.add_argument("--baseline", action="append", default=[],
                        help="another hrm to compare with --hrm, rounds interleaved (--mqtt only); may be repeated")
    parser.add_argument("--syscalls", action="store_true",
                        help="count system calls per notification with strace instead of measuring CPU")
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    if args.syscalls:
        for hrm in args.baseline + [args.hrm]:
            label = "baseline" if hrm != args.hrm else "hrm"
            result, sent = run_round(hrm, args.sim, args.python, args.duration, True, syscalls=True)
            row = summarise(result, sent, True)
            calls = sorted(row["syscalls"].items(), key=lambda item: -item[1])
            print(f"{label} ({hrm}): system calls per notification, {sum(row['syscalls'].values()):.2f} in all: "
                  + ", ".join(f"{name} {count:.2f}" for name, count in calls if count >= 0.01), flush=True)
        return 0
    if args.baseline:
        builds = args.baseline + [args.hrm]
        print(f"hrm watch --mqtt: {STRAPS} straps at {RATE} Hz, {PROCESSES} hrm processes, {args.duration:g} s "
              f"a round, {args.rounds} rounds of each build, interleaved: " + ", ".join(builds), flush=True)
        rows = {hrm: [] for hrm in builds}
        for n in range(args.rounds):
            for hrm in builds:
                row = summarise(*run_round(hrm, args.sim, args.python, args.duration, True), True)
                rows[hrm].append(row)
                print(describe(row, f"round {n + 1} {hrm}"), flush=True)
        print("medians:")
        for hrm in builds:
            print("  " + medians(rows[hrm], hrm))
        return 0
    print(f"hrm watch --mqtt: {STRAPS} straps at {RATE} Hz, {PROCESSES} hrm processes, {args.duration:g} s "
          f"a round, {args.rounds} rounds (with and without --mqtt, interleaved)", flush=True)
    rows = {True: [], False: []}
    for n in range(args.rounds):
        for mqtt in (True, False):
            row = summarise(*run_round(args.hrm, args.sim, args.python, args.duration, mqtt), mqtt)
            rows[mqtt].append(row)
            print(describe(row, f"round {n + 1} {'--mqtt' if mqtt else 'plain'}"), flush=True)
    med = lambda key, mqtt: statistics.median(r[key] for r in rows[mqtt])
    print(f"medians: latency {med('median_ms', True):.2f} ms, p99 {med('p99_ms', True):.2f} ms; "
          f"CPU per notification {med('cpu_us', True):.1f} us with --mqtt, {med('cpu_us', False):.1f} us without "
          f"(ratio {med('cpu_us', True) / med('cpu_us', False):.2f}); wake-ups per notification "
          f"{med('wakeups', True):.2f} with, {med('wakeups', False):.2f} without; peak RSS "
          f"{med('rss_mib', True):.1f} MiB with, {med('rss_mib', False):.1f} MiB without; "
          f"lost {sum(r['lost'] for r in rows[True])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
