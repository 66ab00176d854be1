#!/usr/bin/env python3
"""Where a first run's time goes: hrm watch with no strap remembered against hrm-sim.

    timeline.py SIM HRM [OTHER_HRM ...]     (ROUNDS=3 by default; the binaries alternate)

Times in ms from the client's start, from hrm-sim's log (each call, the device found, the first
notification) and the first measurement line read from hrm's stdout: filter (SetDiscoveryFilter:
start-up, the bus, GetManagedObjects), found, connect (Connect sent: the quiet moment and
StopDiscovery), connected (Connect answered), subscribed (AcquireNotify), notify, line.
"""
import json, os, statistics, subprocess, sys, tempfile, time

SCEN = {"description": "first beat", "devices": [{"address": "C0:FF:EE:00:07:01", "name": "Bench HRM", "rssi": -64,
        "uuids": ["180d", "180f"], "battery": 80, "heartRate": {"bpm": 70, "seed": 7}}]}

def inner(hrm, out):
    start = time.monotonic_ns()
    p = subprocess.Popen([hrm, "watch", "--json", "--duration", "2.5"], stdout=subprocess.PIPE)
    first = None
    for line in p.stdout:
        if first is None and b'"measurement"' in line:
            first = time.monotonic_ns()
    p.wait()
    json.dump({"start_ns": start, "first_ns": first}, open(out, "w"))

def run(hrm, sim):
    with tempfile.TemporaryDirectory() as w:
        s, log, out = (os.path.join(w, n) for n in ("s.json", "sim.jsonl", "out.json"))
        json.dump(SCEN, open(s, "w"))
        env = dict(os.environ, XDG_STATE_HOME=w)
        subprocess.run([sim, "--scenario", s, "--log", log, "--", sys.executable, __file__, "--inner", hrm, out],
                       env=env, check=False, timeout=60)
        o = json.load(open(out)); ev = [json.loads(l) for l in open(log)]
        n = next(e for e in ev if e.get("event") == "notify" and "mono_ns" in e)
        off = n["mono_ns"] / 1e9 - n["t"]
        t0 = o["start_ns"] / 1e9 - off
        def call(m): return next(e["t"] for e in ev if e.get("event") == "call" and e.get("member") == m)
        def reply(m): return next(e["t"] for e in ev if e.get("event") == "reply" and e.get("member") == m)
        r = {"filter": call("SetDiscoveryFilter"), "found": next(e["t"] for e in ev if e.get("event") == "device-found"),
             "connect": call("Connect"), "connected": reply("Connect"), "subscribed": call("AcquireNotify"),
             "notify": n["t"], "line": (o["first_ns"] / 1e9 - off) if o["first_ns"] else float("nan")}
        return {k: (v - t0) * 1000 for k, v in r.items()}

if __name__ == "__main__":
    if sys.argv[1] == "--inner":
        inner(sys.argv[2], sys.argv[3]); sys.exit(0)
    sim = sys.argv[1]; bins = sys.argv[2:]; rounds = int(os.environ.get("ROUNDS", "3"))
    rows = {b: [] for b in bins}
    for i in range(rounds):
        for b in bins:
            r = run(b, sim); rows[b].append(r)
            print(f"round {i+1} {b}: " + ", ".join(f"{k} {v:.0f}" for k, v in r.items()), flush=True)
    for b in bins:
        print(f"median {b}: " + ", ".join(f"{k} {statistics.median(x[k] for x in rows[b]):.0f}" for k in rows[b][0]))
