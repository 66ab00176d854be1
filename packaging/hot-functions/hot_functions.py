#!/usr/bin/env python3
"""Writes the functions of hrm that `hrm watch` runs, hottest first: lld's symbol ordering file
(`make hot-functions`, read by Package.swift's link of hrm in release builds).

The link puts these functions side by side at the start of the text, so the pages that a run
touches are few (each fault maps up to 64 KB around it): peak RSS, issue #29. Callgrind counts every
function that runs, however rarely, in these runs against hrm-sim (a private bus):

  hrm --version
  hrm watch --json, hrm watch --csv, hrm watch (lines, to a pipe): no strap given and none
  remembered, so each scans and chooses before it connects

Names are the linker's (mangled); a name the link no longer has is ignored there, so a stale file
costs pages, never a build.

    make hot-functions        # rebuild the release hrm and hrm-sim, then rewrite the file
"""
import argparse
import collections
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", required=True)
    parser.add_argument("--sim", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=int, default=12, help="each watch run's --duration")
    args = parser.parse_args()
    costs = collections.Counter()
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
        runs = [
            ([], [binary, "--version"]),
            (sim, [binary, "watch", "--json", "--duration", seconds]),
            (sim, [binary, "watch", "--csv", "--duration", seconds]),
            (sim, [binary, "watch", "--duration", seconds]),
        ]
        scenarios = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Scenarios")
        env = dict(os.environ, XDG_STATE_HOME=work, XDG_CONFIG_HOME=work, NO_COLOR="1",
                   HRM_SIM_SCENARIOS=os.path.realpath(scenarios))
        for n, (outer, run) in enumerate(runs):
            out = os.path.join(work, f"callgrind.{n}")
            subprocess.run(outer + valgrind + [f"--callgrind-out-file={out}"] + run, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
            self_costs(out, binary, costs)
            print(f"  hrm {' '.join(run[1:])}: {len(costs)} functions so far", file=sys.stderr)
    names = [name for name, _ in sorted(costs.items(), key=lambda item: (-item[1], item[0]))]
    with open(args.out, "w") as f:
        f.write("".join(name + "\n" for name in names))
    print(f"{args.out}: {len(names)} functions", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
