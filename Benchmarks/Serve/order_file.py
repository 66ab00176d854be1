#!/usr/bin/env python3
"""Writes packaging/hot-functions/hrm-serve.order: the functions hrm serve runs, for lld's
--symbol-ordering-file (see README.md beside this file, "#29: before and after").

hrm serve runs under callgrind inside hrm-sim for --duration seconds at 200 notifications/s, with
WebSocket and SSE clients and a fetch of each page; every function callgrind saw run (start-up,
streaming, shutdown) is listed, in the order callgrind first names it, but for a name that
several objects define (hot_functions.py's `defined_once`). The linker puts those
functions' sections first in .text, so that the pages they share are few: the kernel maps a file's
pages 64 KiB at a time around each one touched (fault-around), and run code scattered over the
whole text makes most of it resident.

    /usr/bin/python3 Benchmarks/Serve/order_file.py --hrm .build/release/hrm --sim .build/release/hrm-sim

Needs valgrind, and a Python with websockets for the clients (--python, as serve_bench.py).
The binaries are copied without their debug sections (valgrind 3.19 cannot read them).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_bench import ADDRESS, scenario  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "packaging", "hot-functions"))
from hot_functions import defined_once  # noqa: E402


def inner(args):
    """Inside hrm-sim: hrm serve under callgrind, its clients and page fetches."""
    work = os.path.dirname(args.out)
    err_path = os.path.join(work, "serve.err")
    serve = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--trace-children=yes", "--demangle=no",
         f"--callgrind-out-file={work}/callgrind.%p.out",
         args.hrm, "serve", ADDRESS, "--listen", "127.0.0.1:0", "--duration", str(args.duration)],
        stdout=subprocess.DEVNULL, stderr=open(err_path, "w"))
    port = None
    deadline = time.monotonic() + 60
    while port is None and time.monotonic() < deadline and serve.poll() is None:
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(err_path).read())
        port = int(match.group(1)) if match else None
        time.sleep(0.2)
    if port is None:
        serve.kill()
        sys.stderr.write("hrm serve did not listen: " + open(err_path).read()[-2000:])
        return 1
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_bench.py")
    clients = [subprocess.Popen([args.python, bench, "--client", "--port", str(port),
                                 "--out", os.path.join(work, f"client{n}.json")]) for n in range(2)]
    # Each page once, and an SSE stream for a while: only for the code they run, so whatever
    # becomes of a fetch (a short read as the server stops under valgrind) is let be.
    for path in ["/", "/api/current", "/metrics", "/trends"]:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).read()
        except Exception:
            pass
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=30) as sse:
            sse.read(4096)
    except Exception:
        pass
    serve.wait()
    for client in clients:
        try:
            client.wait(60)
        except subprocess.TimeoutExpired:
            client.kill()
    return 0 if glob.glob(os.path.join(work, "callgrind.*.out")) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=float, default=20)
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--python", default=".build/serve-venv/bin/python")
    parser.add_argument("--order", default=os.path.join(ROOT, "packaging/hot-functions/hrm-serve.order"))
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    with tempfile.TemporaryDirectory() as work:
        bin_dir = os.path.join(work, "bin")
        os.mkdir(bin_dir)
        for name in ["hrm", "hrm-serve"]:
            subprocess.run(["strip", "--strip-debug", "-o", os.path.join(bin_dir, name),
                            os.path.join(os.path.dirname(args.hrm), name)], check=True)
        shutil.copy(args.sim, bin_dir)
        scenario_path = os.path.join(work, "scenario.json")
        json.dump(scenario(args.duration + 20), open(scenario_path, "w"))
        env = dict(os.environ, XDG_STATE_HOME=work, NO_COLOR="1")
        subprocess.run(
            [os.path.join(bin_dir, "hrm-sim"), "--scenario", scenario_path, "--log", os.path.join(work, "sim.jsonl"),
             "--", sys.executable, __file__, "--inner", "--hrm", os.path.join(bin_dir, "hrm"),
             "--python", args.python, "--out", os.path.join(work, "out"), "--duration", str(args.duration)],
            env=env, check=True)
        names, seen = [], set()
        for path in glob.glob(os.path.join(work, "callgrind.*.out")):
            for line in open(path, errors="replace"):
                match = re.match(r"^c?fn=\(\d+\) (.+)$", line)
                if not match:
                    continue
                name = match.group(1).strip()
                # Addresses callgrind could not name (the dynamic loader's, the libraries') are
                # not symbols of hrm-serve.
                if name.startswith("0x") or name in seen:
                    continue
                seen.add(name)
                names.append(name)
        # As hrm's order: a name several objects define would move each one's section.
        unique = defined_once(os.path.join(bin_dir, "hrm-serve"))
        names = [name for name in names if name in unique]
    if len(names) < 1000:
        sys.exit(f"only {len(names)} functions seen: did hrm serve run?")
    with open(args.order, "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"{len(names)} functions into {args.order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
