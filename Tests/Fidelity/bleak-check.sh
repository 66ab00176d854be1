#!/usr/bin/env bash
# bleak, unmodified, against hrm-sim's `basic` strap: StartNotify and AcquireNotify, with every
# bleak this machine has (Debian's python3-bleak under /usr/bin/python3, and the newest from PyPI
# in the venv that .ci/run prepares at .build/bleak-venv). Each run must pass bleak_probe.py, and
# the simulator's log must show the notify method asked for, its release, then Disconnect.
# Usage: bash Tests/Fidelity/bleak-check.sh [PYTHON...]  (run `make build` first)
set -uo pipefail
cd "$(dirname "$0")/../.."

interpreters=("$@")
if ((${#interpreters[@]} == 0)); then
    interpreters=(/usr/bin/python3)
    [ -x .build/bleak-venv/bin/python ] && interpreters+=(.build/bleak-venv/bin/python)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
runs=0

# The members clients called, in order, from the simulator's JSON-lines log.
calls() { python3 -c 'import json,sys; [print(e["member"]) for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "call"]' "$1"; }

for python in "${interpreters[@]}"; do
    if ! "$python" -c 'import bleak' 2>/dev/null; then
        echo "bleak-check: FAIL $python has no bleak (apt-get install python3-bleak)"
        failures=$((failures + 1))
        continue
    fi
    # bleak learnt AcquireNotify (and the option to refuse it) in 1.0; older ones only StartNotify.
    modes=(start)
    "$python" -c 'import inspect, bleak.backends.bluezdbus.client as c; assert "use_start_notify" in inspect.getsource(c)' 2>/dev/null && modes+=(acquire)
    for mode in "${modes[@]}"; do
        runs=$((runs + 1))
        log="$work/sim-$runs.log"
        out="$work/probe-$runs.txt"
        timeout 90 .build/debug/hrm-sim --scenario basic --log "$log" -- "$python" Tests/Fidelity/bleak_probe.py "$mode" >"$out" 2>&1
        status=$?
        sequence=$(calls "$log" | tr '\n' ' ')
        problem=""
        if [ "$status" -ne 0 ]; then
            problem="probe exited $status"
        elif [ "$mode" = start ]; then
            [[ "$sequence" =~ StartNotify.*StopNotify.*Disconnect ]] || problem="no StartNotify, StopNotify, Disconnect in order"
            [[ "$sequence" == *AcquireNotify* ]] && problem="AcquireNotify called in StartNotify mode"
        else
            [[ "$sequence" =~ AcquireNotify.*Disconnect ]] || problem="no AcquireNotify then Disconnect"
            [[ "$sequence" == *StartNotify* ]] && problem="StartNotify called in AcquireNotify mode"
            grep -q '"acquire-released"' "$log" || problem="the acquired fd was never released"
        fi
        version=$(grep -m1 '^bleak ' "$out" | cut -d' ' -f2)
        if [ -n "$problem" ]; then
            echo "bleak-check: FAIL bleak $version ($python) $mode: $problem"
            sed 's/^/    /' "$out" | tail -15
            echo "    calls: $sequence"
            failures=$((failures + 1))
        else
            echo "bleak-check: ok   bleak $version ($python) $mode: $(grep '^notifications' "$out")"
        fi
    done
done

echo "bleak-check: $runs runs, $failures failed"
[ "$failures" -eq 0 ]
