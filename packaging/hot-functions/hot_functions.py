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

Then the data every notification reads or writes (witness tables, metadata, caches, globals):
lackey's trace of the same 200 Hz run, the 64-byte lines of hrm's image touched between nine in
ten pairs of successive measurements, and the symbols on them. A Swift object file keeps its
metadata and witness tables in a few sections of its own, and lld moves a listed symbol's whole
section: the hot files' sections end up side by side at the start of .data.rel.ro and .data
instead of one or two lines on each of 20 pages ("Issue #29, seventh session"). hrm's own
modules' symbols come first, the runtime's and the standard library's (some in one large section)
after them.

Names are the linker's (mangled); a name the link no longer has is ignored there, so a stale file
costs pages, never a build.

    make hot-functions        # rebuild the release hrm and hrm-sim, then rewrite the file
"""
import argparse
import bisect
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


# A listed name moves its whole input section. Past this size a section carries more cold code or
# data along than it gathers: the standard library's Swift.o keeps most of its code in one 1.6 MB
# .text, and one helper of it 41st in the notification's list put everything after it 1.6 MB away.
LARGEST_SECTION = 16 * 1024


def in_large_sections(map_path):
    """The symbols that lld's map (`-Map`) shows inside input sections larger than LARGEST_SECTION."""
    line_format = re.compile(r"^\s*[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+( +)(.*)$")
    names, size = set(), 0
    with open(map_path, errors="replace") as f:
        for line in f:
            match = line_format.match(line.rstrip("\n"))
            if not match:
                continue
            # The map indents output sections by one space, input sections by 9, symbols by 17.
            indent = len(match.group(2))
            if indent == 9:
                size = int(match.group(1), 16)
            elif indent == 17 and size > LARGEST_SECTION:
                names.add(match.group(3))
    return names


def data_symbols(binary):
    """`binary`'s sized data symbols that it defines once: (address, size, name), by address."""
    listing = subprocess.run(["nm", "--defined-only", "--print-size", binary], check=True,
                             capture_output=True, text=True)
    rows = [fields for fields in (line.split() for line in listing.stdout.splitlines())
            if len(fields) == 4 and fields[2] in "dDbBrRvV"]
    counts = collections.Counter(fields[3] for fields in rows)
    return sorted((int(fields[0], 16), int(fields[1], 16), fields[3]) for fields in rows
                  if counts[fields[3]] == 1 and int(fields[1], 16) > 0)


def markers(binary, pattern):
    """The addresses of `binary`'s functions whose names contain `pattern`."""
    listing = subprocess.run(["nm", "--defined-only", binary], check=True, capture_output=True, text=True)
    return {int(fields[0], 16) for fields in (line.split() for line in listing.stdout.splitlines())
            if len(fields) == 3 and fields[1] in "tTwW" and pattern in fields[2]}


# Where valgrind 3.19 (amd64) loads a position-independent executable: the trace's addresses less
# this are the binary's own. Checked: a trace with no marker at all stops the script.
VALGRIND_PIE_BASE = 0x108000


def hot_data_lines(command, env, work, marks):
    """Runs `command` (lackey's, its trace into the FIFO `work`/trace) and returns the 64-byte data
    lines (the binary's address >> 6) touched between nine in ten pairs of successive markers:
    `marks`, instructions every notification runs once."""
    fifo = os.path.join(work, "trace")
    os.mkfifo(fifo)
    run = subprocess.Popen(command(fifo), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Lackey writes `I  0401000,3` for an instruction and ` L 1ffefffe18,8` (S, M) for data.
    wanted = {b"%x" % (mark + VALGRIND_PIE_BASE) for mark in marks}
    windows, seen, current = 0, collections.Counter(), set()
    with open(fifo, "rb", buffering=1 << 20) as trace:
        for line in trace:
            if line[:1] == b"I":
                if line[3:line.index(b",")].lstrip(b"0") in wanted:
                    windows += 1
                    seen.update(current)
                    current = set()
            elif line[:1] == b" ":
                current.add(int(line[3:line.index(b",")], 16) >> 6)
    if run.wait(timeout=600) != 0:
        sys.exit(f"lackey's run exited {run.returncode}")
    if windows < 100:
        sys.exit(f"lackey's trace passed the markers {windows} times: not hrm at {VALGRIND_PIE_BASE:#x}?")
    return {line - (VALGRIND_PIE_BASE >> 6) for line, count in seen.items() if count >= 0.9 * windows}


def data_on(lines, symbols, modules):
    """The names of `symbols` on `lines`: those of `modules` (hrm's own) first, by address."""
    starts = [address for address, _, _ in symbols]
    names = []
    for line in sorted(lines):
        first, end = line << 6, (line + 1) << 6
        index = max(bisect.bisect_right(starts, first) - 1, 0)
        while index < len(symbols) and symbols[index][0] < end:
            address, size, name = symbols[index]
            if address + size > first and name not in names:
                names.append(name)
            index += 1
    ours = tuple(f"$s{len(module)}{module}" for module in modules)
    return [name for name in names if name.startswith(ours)] + [
        name for name in names if not name.startswith(ours)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", required=True)
    parser.add_argument("--sim", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=int, default=12, help="each watch run's --duration")
    parser.add_argument("--map", required=True, help="lld's map of the link of --hrm (-Map)")
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
        # The data: the 200 Hz run again, under lackey, one window per decoded notification.
        lines = hot_data_lines(
            lambda trace: [args.sim, "--scenario", fast_path, "--", "valgrind", "--tool=lackey",
                           "--trace-mem=yes", f"--log-file={trace}", binary, "watch", "--json",
                           "--count", "3000"],
            env, work, markers(binary, "9HeartRate0aB11MeasurementV8decoding"))
        data = data_on(lines, data_symbols(binary), os.listdir(os.path.join(scenarios, "..", "Sources")))
    first = set(ordered)
    large = in_large_sections(args.map)
    # A large section goes after the notification's functions, not among them: still at the
    # front of the text, where it was before the filter. (Placed after the start's functions it
    # seemed to cost 0.3 MiB of peak RSS, but that run had not evicted the page cache: within
    # noise once both builds were read in alike.)
    names = [name for name in ordered if name in unique and name not in large] + [
        name for name in ordered if name in unique and name in large] + [
        name for name in hottest(rest) if name not in first and name in unique]
    data = [name for name in data if name not in large]
    with open(args.out, "w") as f:
        f.write("".join(name + "\n" for name in names + data))
    print(f"{args.out}: {len(names)} functions, {len(data)} data symbols on {len(lines)} lines",
          file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
