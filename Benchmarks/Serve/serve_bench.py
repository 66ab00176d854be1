#!/usr/bin/env python3
"""hrm serve under load: `make bench-serve` (see README.md beside this file).

One strap sends 200 notifications/s; `hrm serve` (which runs hrm-serve in its place, same PID)
serves them to N WebSocket clients, each a process of its own (Python `websockets`, asyncio). Each
frame carries its sequence number as a UINT16 heart rate, so every message a client receives is
matched to the simulator's send (its log's `mono_ns`, CLOCK_MONOTONIC just before the send); the
clients stamp each message with CLOCK_MONOTONIC as it arrives.

  latency    message received by a client - frame sent by the simulator, over every client
             (median, p90, p99, max)
  CPU        hrm-serve's CPU time (all threads, /proc/PID/task/*/schedstat) over the streaming
             window (from when every client has its first measurement to 1 s before the end),
             per notification hrm-sim sent in that window
  peak RSS   hrm-serve's peak resident set, the whole run: /usr/bin/time's %M (its ru_maxrss:
             the larger of hrm's before it became hrm-serve and hrm-serve's own), not this
             harness's ru_maxrss, which the kernel takes as at least this Python's RSS (12.8 MB)

A last round has the same clients beside --stalled clients (SSE and WebSocket in turn) that stop
reading: how much a client that cannot keep up delays the others until hrm serve drops it (the
number `ServeBinaryTests.aClientThatStopsReadingDelaysNobody` prints and no longer bounds).

Run as hrm-sim's command (`--inner`), or without it to drive the rounds and print the report.
"""
import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchkit import cpu_ns, free_port, percentile  # noqa: E402

ADDRESS = "D2:4B:7E:10:20:40"
RATE = 200


def scenario(seconds):
    count = int(RATE * (seconds + 4))
    frames = ["01%02x%02x" % (n & 0xFF, n >> 8) for n in range(1, count + 1)]
    return {"description": "serve benchmark", "devices": [{
        "address": ADDRESS, "name": "Bench Strap", "rssi": -50, "uuids": ["180d"], "known": True,
        "battery": None, "mtu": 247,
        "heartRate": {"mode": "frames", "interval": 1.0 / RATE, "frames": frames}}]}


def client(args):
    """One WebSocket client: every measurement's arrival (mono ns, sequence) into --out."""
    from websockets.asyncio.client import connect

    async def run():
        arrivals = []
        async with connect(f"ws://127.0.0.1:{args.port}/ws", compression=None, proxy=None,
                           max_queue=None) as ws:
            try:
                async for message in ws:
                    stamp = time.monotonic_ns()
                    if '"measurement"' in message:
                        arrivals.append((stamp, json.loads(message)["bpm"]))
            except Exception:
                pass
        return arrivals

    arrivals = asyncio.run(run())
    with open(args.out, "w") as f:
        json.dump(arrivals, f)
    return 0


def stalled_client(port, websocket):
    """A feed client that asks for the stream and then never reads (a small receive buffer, so
    that it falls behind at once)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    if websocket:
        request = (f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                   "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
    else:
        request = f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    sock.sendall(request.encode())
    return sock


def time_child(pid):
    """The process /usr/bin/time (`pid`) runs: hrm serve, whose CPU is measured."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return int(f.read().split()[0])


def status_kib(pid, field):
    """A /proc/PID/status figure in KiB (VmHWM, VmRSS), or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def inner(args):
    """Inside hrm-sim: hrm serve, the clients, CPU samples; writes JSON to --out."""
    work = os.path.dirname(args.out)
    # A child's ru_maxrss counts the memory of the process it was forked from (the kernel keeps the
    # larger of the two at exec), here this Python's 12.8 MB: /usr/bin/time, a small C program,
    # forks hrm and reports hrm-serve's own peak.
    rss_path = args.out + ".rss"
    serve = subprocess.Popen(
        ["/usr/bin/time", "-f", "%M", "-o", rss_path,
         args.hrm, "serve", ADDRESS, "--listen", "127.0.0.1:0", "--duration", str(args.duration)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0)
    line = serve.stderr.readline().decode()
    serve_pid = time_child(serve.pid)
    port = int(line.split("127.0.0.1:")[1].split("/")[0])
    outs = [os.path.join(work, f"client{n}.json") for n in range(args.clients)]
    clients = [subprocess.Popen([sys.executable, __file__, "--client", "--port", str(port), "--out", out])
               for out in outs]
    stalled = [stalled_client(port, websocket=n % 2 == 1) for n in range(args.stalled)]
    # The streaming window: once every client has had time to connect and get going.
    time.sleep(2.0)
    start = (time.monotonic_ns(), cpu_ns(serve_pid))
    time.sleep(max(1.0, args.duration - 4.0))
    end = (time.monotonic_ns(), cpu_ns(serve_pid))
    # hrm-serve's own high-water mark so far (its memory only, not hrm's before the exec).
    hwm_kib = status_kib(serve_pid, "VmHWM")
    _, status, _ = os.wait4(serve.pid, 0)
    stderr = serve.stderr.read().decode(errors="replace")
    for c in clients:
        c.wait(10)
    for sock in stalled:
        sock.close()
    arrivals = []
    for out in outs:
        try:
            arrivals.append(json.load(open(out)))
        except (OSError, ValueError):
            arrivals.append([])
    json.dump({"status": os.waitstatus_to_exitcode(status), "stderr": stderr[-2000:], "window": [start, end],
               "maxrss_kib": peak_rss_kib(rss_path), "hwm_kib": hwm_kib, "arrivals": arrivals}, open(args.out, "w"))
    return 0


def peak_rss_kib(path):
    """/usr/bin/time's %M (KiB), the last line of its -o file (a signal's note comes first)."""
    with open(path) as f:
        return int(f.read().split()[-1])


def run_round(args, clients, stalled=0):
    with tempfile.TemporaryDirectory() as work:
        scenario_path = os.path.join(work, "scenario.json")
        json.dump(scenario(args.duration), open(scenario_path, "w"))
        log, out = os.path.join(work, "sim.jsonl"), os.path.join(work, "out.json")
        env = dict(os.environ, XDG_STATE_HOME=work, NO_COLOR="1")
        subprocess.run(
            [args.sim, "--scenario", scenario_path, "--log", log, "--", args.python, __file__, "--inner",
             "--hrm", args.hrm, "--out", out, "--duration", str(args.duration), "--clients", str(clients),
             "--stalled", str(stalled)],
            env=env, check=False)
        result = json.load(open(out))
        sent = [json.loads(line) for line in open(log)]
        sent = [e for e in sent if e.get("event") == "notify"]
        return result, sent


def measure(args, clients, label, stalled=0):
    result, sent = run_round(args, clients, stalled)
    if result["status"] != 0:
        sys.exit(f"{label}: hrm serve exited {result['status']}: {result['stderr']}")
    sent_at = {}
    for event in sent:
        frame = bytes.fromhex(event["hex"])
        sent_at[frame[1] | frame[2] << 8] = event["mono_ns"]
    (t0, cpu0), (t1, cpu1) = result["window"]
    in_window = sum(1 for mono in sent_at.values() if t0 <= mono < t1)
    row = {"clients": clients, "cpu_us": (cpu1 - cpu0) / 1e3 / max(in_window, 1),
           "rss_mib": result["maxrss_kib"] / 1024, "hwm_mib": (result["hwm_kib"] or 0) / 1024,
           "notifications": in_window}
    latencies, lost, received = [], 0, 0
    for arrivals in result["arrivals"]:
        sequences = [seq for _, seq in arrivals]
        received += len(sequences)
        if sequences:
            seen = set(sequences)
            lost += sum(1 for s in range(min(sequences), max(sequences) + 1) if s not in seen)
        latencies += [(stamp - sent_at[seq]) / 1e6 for stamp, seq in arrivals if seq in sent_at]
    if latencies:
        row.update(median_ms=statistics.median(latencies), p90_ms=percentile(latencies, 0.90),
                   p99_ms=percentile(latencies, 0.99), max_ms=max(latencies))
    row.update(received=received, lost=lost,
               short=sum(1 for a in result["arrivals"] if len(a) < 0.9 * RATE * (args.duration - 2)))
    text = (f"  {label}: CPU {row['cpu_us']:.1f} us/notification over {in_window} notifications, "
            f"peak RSS {row['rss_mib']:.1f} MiB (VmHWM at the window's end {row['hwm_mib']:.1f})")
    if latencies:
        text += (f", {received} messages to {clients} clients, lost {lost}: latency median "
                 f"{row['median_ms']:.3f} p90 {row['p90_ms']:.3f} p99 {row['p99_ms']:.3f} max {row['max_ms']:.3f} ms")
    print(text, flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=float, default=12)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stalled", type=int, default=2,
                        help="clients that stop reading, in the last round (0: no such round)")
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--python", default=".build/serve-venv/bin/python",
                        help="a Python with websockets (the clients)")
    args = parser.parse_args()
    if args.client:
        return client(args)
    if args.inner:
        return inner(args)

    print(f"hrm serve, {RATE} notifications/s, {args.clients} WebSocket clients, {args.rounds} rounds "
          f"of {args.duration:.0f} s:", flush=True)
    rows = [measure(args, args.clients, f"round {n + 1}") for n in range(args.rounds)]
    print("hrm serve with no client (what the server costs beside watch's work):", flush=True)
    alone = measure(args, 0, "no client")
    beside = None
    if args.stalled:
        print(f"hrm serve, {args.clients} WebSocket clients beside {args.stalled} that stop reading:", flush=True)
        beside = measure(args, args.clients, "beside stalled clients", stalled=args.stalled)
    medians = {key: statistics.median(r[key] for r in rows) for key in ("median_ms", "p99_ms", "cpu_us", "rss_mib")}
    print(f"\nmedians over rounds ({args.clients} clients)")
    print(f"  latency median              {medians['median_ms']:8.3f} ms")
    print(f"  latency p99                 {medians['p99_ms']:8.3f} ms")
    print(f"  CPU per notification        {medians['cpu_us']:8.1f} us   (no client: {alone['cpu_us']:.1f} us; "
          f"per client: {(medians['cpu_us'] - alone['cpu_us']) / max(args.clients, 1):.1f} us)")
    print(f"  peak RSS                    {medians['rss_mib']:8.1f} MiB (no client: {alone['rss_mib']:.1f} MiB)")
    if beside and "p99_ms" in beside:
        print(f"  beside {args.stalled} stalled clients: latency p99 {beside['p99_ms']:.3f} ms, "
              f"max {beside['max_ms']:.3f} ms")
    losses = sum(r["lost"] + r["short"] for r in rows + ([beside] if beside else []))
    print(f"  lost messages, short clients: {losses}")
    return 1 if losses else 0


if __name__ == "__main__":
    sys.exit(main())
