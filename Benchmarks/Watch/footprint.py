#!/usr/bin/env python3
"""What one notification of `hrm watch --json` runs on the reader's thread: instructions, and the
code it touches (issue #29). Callgrind counts; nothing here is timed.

hrm watch runs under valgrind against hrm-sim's strap (watch_bench.py's scenario, 200
notifications a second, stdout into a pipe). Of each thread's profile, the reader's is the one
that calls recv(2) most; its figures, per notification (per recv):

  instructions     everything the thread ran, start included, over the notifications
  hot code         the instructions run by at least 97 % of the notifications, and the 64-byte
                   lines and 4 KiB pages of code they are on, by object (hrm, libc): what the
                   caches and the TLB must hold for a notification, cold after each 5 ms sleep
  --functions      the functions with the most hot instructions

    python3 Benchmarks/Watch/footprint.py --hrm .build/release/hrm [--functions 40]

Valgrind cannot read the debug information of a release build; the binary is copied without it
(objcopy --strip-debug) first: the symbols stay.
"""
import argparse
import bisect
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import watch_bench  # noqa: E402


def profile(hrm, sim, work, rate, seconds):
    """Runs hrm under callgrind inside hrm-sim; the per-thread profile files."""
    scenario = os.path.join(work, "scenario.json")
    with open(scenario, "w") as f:
        json.dump(watch_bench.scenario(rate, seconds + 2, True), f)
    out = os.path.join(work, "callgrind")
    inner = (f"valgrind --tool=callgrind --separate-threads=yes --dump-instr=yes --compress-strings=no "
             f"--callgrind-out-file={out}.%p {hrm} watch {watch_bench.ADDRESS} --json --duration {seconds} "
             f"| cat > /dev/null")
    env = dict(os.environ, XDG_STATE_HOME=work, NO_COLOR="1")
    subprocess.run([sim, "--scenario", scenario, "--", "sh", "-c", inner], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    return [os.path.join(work, name) for name in os.listdir(work) if name.startswith("callgrind.")]


def parse(path):
    """A callgrind profile with instruction positions: ({(object, address): self cost}, recv calls)."""
    costs = collections.Counter()
    recvs = 0
    obj = None
    callee = None
    last = 0
    skip = False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("cfn="):
                callee = line[4:].strip()
            elif line.startswith("calls="):
                if callee and re.search(r"(^|[^A-Za-z_])(__libc_)?recv$", callee):
                    recvs += int(line.split()[0][6:])
                skip = True  # the next cost line is the call's, its callees included
            elif line[:1].isdigit() or line[:1] in "+-*":
                fields = line.split()
                position = fields[0]
                if position.startswith("0x"):
                    address = int(position, 16)
                elif position[0] in "+-":
                    address = last + int(position, 0)
                elif position == "*":
                    address = last
                else:
                    address = int(position)
                last = address
                if skip:
                    skip = False
                elif len(fields) >= 3:
                    costs[(obj, address)] += int(fields[-1])
    return costs, recvs


def symbols(binary):
    """(addresses, names) of `binary`'s functions, sorted by address."""
    listing = subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True, text=True, check=True)
    table = [(int(fields[0], 16), fields[2]) for fields in (line.split() for line in listing.stdout.splitlines())
             if len(fields) == 3 and fields[1] in "tTwW"]
    return [a for a, _ in table], [n for _, n in table]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--functions", type=int, default=0, help="list the N functions with most hot code")
    args = parser.parse_args()
    for tool in ("valgrind", "objcopy", "nm"):
        if not shutil.which(tool):
            sys.exit(f"footprint: {tool} is needed (apt-get install valgrind binutils)")
    with tempfile.TemporaryDirectory() as work:
        hrm = os.path.join(work, "hrm")
        subprocess.run(["objcopy", "--strip-debug", os.path.abspath(args.hrm), hrm], check=True)
        best = None
        for path in profile(hrm, os.path.abspath(args.sim), work, args.rate, args.seconds):
            costs, recvs = parse(path)
            if best is None or recvs > best[1]:
                best = (costs, recvs)
        if not best or best[1] == 0:
            sys.exit("footprint: no thread received a notification")
        costs, recvs = best
        total = sum(costs.values())
        hot = [key for key, count in costs.items() if count >= recvs * 97 // 100]
        print(f"reader thread: {recvs} notifications, {total / recvs:,.0f} instructions each")
        print(f"hot code: {len(hot):,} instructions on {len({(o, a >> 6) for o, a in hot})} lines "
              f"of 64 bytes, {len({(o, a >> 12) for o, a in hot})} pages")
        for obj in sorted({o for o, _ in hot}, key=str):
            mine = [a for o, a in hot if o == obj]
            name = "hrm" if obj and obj.endswith("/hrm") else os.path.basename(obj or "?")
            print(f"  {name:24} {len(mine):5,} instructions, {len({a >> 6 for a in mine}):4} lines, "
                  f"{len({a >> 12 for a in mine}):3} pages")
        if args.functions:
            addresses, names = symbols(hrm)
            per = collections.Counter()
            for obj, address in hot:
                if obj and obj.endswith("/hrm"):
                    index = bisect.bisect_right(addresses, address) - 1
                    per[names[index] if index >= 0 else "?"] += 1
            top = per.most_common(args.functions)
            shown = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(n for n, _ in top),
                                   capture_output=True, text=True).stdout.splitlines()
            for (_, count), name in zip(top, shown):
                print(f"  {count:5} {name[:110]}")


if __name__ == "__main__":
    main()
