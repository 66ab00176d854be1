#!/bin/bash
# hrm against real BlueZ in ../shared/realbluez (run by .ci/run, not by make test: a user's machine
# has no such lab). Boots the lab once (about 35 s) and checks what Tests/Fidelity/lab-e2e.sh printed.
# A lab that cannot start (setup or boot failure) prints SKIPPED with the reason and does not fail
# CI; a check that fails does.
set -u
cd "$(dirname "$0")/../.."
LAB=../shared/realbluez
export HRM_LAB_BUILD=${HRM_LAB_BUILD:-/tmp/hrm-realbluez-build}
if ! "$LAB/setup" > /tmp/hrm-lab-setup.log 2>&1; then
    echo "lab-check: SKIPPED: the real BlueZ lab could not be set up (see /tmp/hrm-lab-setup.log); its checks did not run"
    exit 0
fi
out=/tmp/hrm-lab-e2e.txt
# Two spare controllers: the relay's and its consumer's (one link per virtual controller). A guest
# that did not come up (a loaded host can keep its controllers from appearing in time) gets one
# more try before the check is SKIPPED.
for attempt in 1 2; do
    HRM_LAB_SPARE_ADAPTERS=2 timeout 420 "$LAB/boot" bash Tests/Fidelity/lab-e2e.sh > "$out" 2>&1
    status=$?
    [ $status -eq 124 ] || [ $status -eq 125 ] || break
    echo "lab-check: the lab did not boot (status $status, attempt $attempt: $(grep -m1 'LAB SETUP FAILED' "$out"))"
done
if [ $status -eq 124 ] || [ $status -eq 125 ]; then
    echo "lab-check: SKIPPED: the real BlueZ lab did not boot (status $status, output in $out); its checks did not run"
    exit 0
fi
tr -d '\r' < "$out" > "$out.clean"
passed=0
failed=0
check() {
    if grep -Eq "$2" "$out.clean"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "lab-check: FAILED: $1"; fi
}
check "hrm scan --json --adapter hci0 lists Lab HRM" '"type":"device".*"name":"Lab HRM"'
check "hrm scan exits 0" '^scan-status 0$'
check "hrm watch --count 3 prints three measurements" '"type":"measurement"'
check "hrm watch exits 0" '^watch-status 0$'
check "hrm watch reports stopped" '"state":"stopped"'
check "Ctrl-C exits 0" '^ctrl-c-status 0$'
check "measurements before Ctrl-C" '^ctrl-c-measurements [1-9]'
check "--count leaves the device disconnected" '^connected-after-count false$'
check "Ctrl-C leaves the device disconnected" '^connected-after-ctrl-c false$'
check "hrm relay: the consumer took 5 notifications" '^relay-consumer-status 0$'
check "hrm relay: the consumer found it by its name and appearance" '"name": "hrm Lab HRM".*"appearance": 833'
check "hrm relay: the consumer read the strap's location" '"location": "01"'
check "hrm relay: the consumer's values counted" '^relay-values [5-9]'
check "hrm relay: in order" '^relay-in-order yes$'
check "hrm relay: consumer_connected names the consumer" '"state":"consumer_connected","consumer":"00:AA:01'
check "hrm relay: subscribed" '"type":"relay".*"state":"subscribed"'
check "hrm relay: unsubscribed" '"type":"relay".*"state":"unsubscribed"'
check "hrm relay: consumer_disconnected" '"state":"consumer_disconnected"'
check "hrm relay: bluetoothd took the values by AcquireNotify" '^relay-acquired [1-9]'
check "hrm relay: Ctrl-C exits 0" '^relay-status 0$'
check "hrm relay: no advertisement left in bluetoothd" '^relay-advertisements-after 0$'
check "--ecg without PMD: pmd_unavailable said" '"code":"pmd_unavailable"'
check "--ecg without PMD: heart rate goes on" '^ecg-measurements 3$'
check "--ecg without PMD: exits 0" '^ecg-status 0$'
check "hrm pair: a pairing that never answers is exit 1" '^pair-status 1$'
check "hrm pair: says so, and what to do" 'hrm pair: the device did not complete pairing within 30 s'
check "hrm pair: bluetoothd accepted hrm's agent" '^pair-agent-registered 1$'
check "hrm pair: not paired after" '^pair-paired false$'
check "hrm pair leaves the device disconnected" '^connected-after-pair false$'
check "hrm unpair of a device not paired: nothing to do, exit 0" 'is not paired: nothing to do'
check "hrm unpair exits 0" '^unpair-status 0$'
grep -E '^relay-latency-ms' "$out.clean" | sed 's/^/lab-check: /'
measurements=$(sed -n '/^== watch/,/^watch-status/p' "$out.clean" | grep -c '"type":"measurement"')
if [ "$measurements" -eq 3 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "lab-check: FAILED: $measurements measurements, not 3"; fi
echo "lab-check: $passed passed, $failed failed"
[ $failed -eq 0 ]
