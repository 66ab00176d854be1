#!/bin/bash
# Runs inside the realbluez guest (../shared/realbluez/boot): hrm against real bluetoothd 5.66,
# with hci0 as the central and BlueZ's heart-rate example ("Lab HRM") on hci1. Prints markers
# that Tests/Fidelity/lab-check.sh verifies.
set -u
export XDG_STATE_HOME=/tmp/hrm-state
HRM=${HRM:-.build/debug/hrm}
STRAP=/org/bluez/hci0/dev_00_AA_01_01_00_01

echo "== scan"
# Under emulation a loaded host slows the guest: room to see the advertisement.
$HRM scan --json --adapter hci0 --timeout 10
echo "scan-status $?"

# hrm sends Disconnect and exits without waiting for its reply (which comes only once the link
# is down, 2-2.7 s later): bluetoothd must still take the link down, and it must stay down.
connected() {
    dbus-send --system --print-reply --dest=org.bluez $STRAP org.freedesktop.DBus.Properties.Get \
        string:org.bluez.Device1 string:Connected | tail -1 | awk '{print $3}'
}
# Connected goes false within 8 s of hrm's exit, and is still false 3 s later.
report_disconnected() {
    for _ in $(seq 80); do [ "$(connected)" = false ] && break; sleep 0.1; done
    sleep 3
    echo "connected-after-$1 $(connected)"
}

echo "== watch"
timeout 90 $HRM watch --json --count 3 --adapter hci0 --scan-timeout 30 "Lab HRM"
echo "watch-status $?"
report_disconnected count

echo "== ctrl-c"
$HRM watch --json --adapter hci0 --scan-timeout 30 "Lab HRM" > /tmp/ctrl-c.jsonl &
pid=$!
# Ctrl-C once it streams (at most 60 s of waiting), however slow the guest is today.
for _ in $(seq 600); do grep -q '"type":"measurement"' /tmp/ctrl-c.jsonl && break; sleep 0.1; done
kill -INT $pid
wait $pid
echo "ctrl-c-status $?"
grep -c '"type":"measurement"' /tmp/ctrl-c.jsonl | sed 's/^/ctrl-c-measurements /'
report_disconnected ctrl-c
