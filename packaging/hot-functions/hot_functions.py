#!/usr/bin/env python3
"""Writes the functions of hrm that `hrm watch` runs, hottest first: lld's symbol ordering file
(`make hot-functions`, read by Package.swift's link of hrm in release builds).

The link puts these functions side by side at the start of the text, so the pages that a run
touches are few (each fault maps up to 64 KB around it): peak RSS, issue #29. Callgrind counts every
function that runs, however rarely, in these runs against hrm-sim (a private bus):

  a notification's path: hrm watch --json against a strap at 200 Hz with RR intervals, counted
  only inside the reader thread's loop
  hrm --version
  hrm watch --json, hrm watch --csv, hrm watch (lines, to a pipe): no strap given and none
  remembered, so each scans and chooses before it connects

What every notification runs comes first, hottest first: side by side, a few pages that the
caches and the TLB keep between two notifications (Benchmarks/Watch/README.md, "Issue #29, fourth
session"). Then the other runs' functions, the most instructions over all of them first.

Names are the linker's (mangled); a name the link no longer has is ignored there, so a stale file
costs pages, never a build.

    make hot-functions        # rebuild the release hrm and hrm-sim, then rewrite the file
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile


def callgrind(command, out, env):
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--compress-strings=no", "--compress-pos=no", "--demangle=no",
         "--dump-instr=no", f"--callgrind-out-file={out}"] + command,
        env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)


def self_costs(path, binary, costs):
    """Adds each function of `binary`'s own object to `costs`: its instructions (self, not callees)."""
    current_object = current = None
    skip = False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                current_object = line[3:].strip()
            elif line.startswith("fn="):
                # Callgrind marks a recursive function's inner levels with 'N: the same function.
                name = re.sub(r"'[0-9]+$", "", line[3:].strip())
                current = name if os.path.realpath(current_object or "") == binary else None
                if current:
                    costs[current] += 0
            elif line.startswith("calls="):
                skip = True  # the next cost line is the call's, callees included
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip:
                    skip = False
                elif current:
                    costs[current] += int(line.split()[-1])


def defined_once(binary):
    """The names of functions `binary` defines exactly once."""
    listing = subprocess.run(["nm", "--defined-only", binary], check=True, capture_output=True, text=True)
    counts = collections.Counter(
        fields[2] for fields in (line.split() for line in listing.stdout.splitlines())
        if len(fields) == 3 and fields[1] in "tTwW")
    return {name for name, count in counts.items() if count == 1}


def hottest(costs):
    """The names of `costs`, most instructions first (ties by name, so the file is stable)."""
    return [name for name, _ in sorted(costs.items(), key=lambda item: (-item[1], item[0]))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", required=True)
    parser.add_argument("--sim", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=int, default=12, help="each watch run's --duration")
    args = parser.parse_args()
    seconds = str(args.seconds)
    with tempfile.TemporaryDirectory() as work:
        # Valgrind 3.19 cannot read the DWARF 5 of a Swift 6 build: the copy it runs keeps the symbol
        # table (the names the linker orders by) and drops the debug information.
        os.mkdir(os.path.join(work, "bin"))
        binary = os.path.join(work, "bin", "hrm")
        subprocess.run(["strip", "--strip-debug", "-o", binary, args.hrm], check=True)
        valgrind = ["valgrind", "--tool=callgrind", "--compress-strings=no", "--compress-pos=no",
                    "--demangle=no", "--dump-instr=no"]
        # Each watch runs in hrm-sim's private bus, valgrind inside it; the last scans.
        sim = [args.sim, "--scenario", "basic", "--"]
        scenarios = os.path.realpath(
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Scenarios"))
        # basic's strap at 200 notifications a second: the reader's loop, and nothing else, counted.
        fast = json.load(open(os.path.join(scenarios, "basic.json")))
        fast["devices"][0]["heartRate"]["interval"] = 0.005
        fast["events"] = []
        fast_path = os.path.join(work, "fast.json")
        json.dump(fast, open(fast_path, "w"))
        runs = [
            ([args.sim, "--scenario", fast_path, "--"], ["--toggle-collect=*DatagramReader*loop*"],
             [binary, "watch", "--json", "--count", "1000"]),
            ([], [], [binary, "--version"]),
            (sim, [], [binary, "watch", "--json", "--duration", seconds]),
            (sim, [], [binary, "watch", "--csv", "--duration", seconds]),
            (sim, [], [binary, "watch", "--duration", seconds]),
        ]
        env = dict(os.environ, XDG_STATE_HOME=work, XDG_CONFIG_HOME=work, NO_COLOR="1",
                   HRM_SIM_SCENARIOS=scenarios)
        rest = collections.Counter()
        for n, (outer, options, run) in enumerate(runs):
            out = os.path.join(work, f"callgrind.{n}")
            subprocess.run(outer + valgrind + options + [f"--callgrind-out-file={out}"] + run, env=env,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
            costs = collections.Counter()
            self_costs(out, binary, costs)
            if n == 0:
                ordered = hottest(costs)
            else:
                rest.update(costs)
            print(f"  hrm {' '.join(run[1:])}: {len(costs)} functions", file=sys.stderr)
        # A local name that several objects define (a merged helper, `$sSqwxx`, a value witness)
        # would move every one of their sections, some a prebuilt library's whole text (the
        # regex parser's 475 KB for one helper): left where they are.
        unique = defined_once(binary)
    first = set(ordered)
    names = [name for name in ordered + [name for name in hottest(rest) if name not in first]
             if name in unique]
    with open(args.out, "w") as f:
        f.write("".join(name + "\n" for name in names))
    print(f"{args.out}: {len(names)} functions", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
