#!/usr/bin/env python3
"""Compares a run of shared/realbluez/probe.py against hrm-sim with the real lab's transcript.

Usage: compare-probe.py REAL_TRANSCRIPT SIM_OUTPUT

Both are reduced to the sequence of milestones a heart-rate client relies on (object paths,
signal kinds, property names, errors); the simulator must show every milestone of the real run,
in the same order. Timings and values are not compared. Exit 0 when they agree, 1 with the first
difference otherwise.
"""
import re
import sys

MILESTONES = [
    r"PropertiesChanged /org/bluez/hci0 org.bluez.Adapter1 \{'Discovering': 'dbus.Boolean\(True",
    r"InterfacesAdded /org/bluez/hci0/dev_00_AA_01_01_00_01 \[.*'org.bluez.Device1'",
    r"Device1 \{.*'Address': \"'00:AA:01:01:00:01'\"",
    r"OK device advertising 0x180D found",
    r"Connect\(\) returned",
    r"PropertiesChanged /org/bluez/hci0/dev_00_AA_01_01_00_01 org.bluez.Device1 \{\} \[.*'(TxPower|RSSI)'",
    r"PropertiesChanged /org/bluez/hci0 org.bluez.Adapter1 \{'Discovering': 'dbus.Boolean\(False",
    r"org.bluez.Device1 \{'Connected': 'dbus.Boolean\(True",
    r"org.bluez.Device1 \{.*'ServicesResolved': 'dbus.Boolean\(True",
    r"InterfacesAdded /org/bluez/hci0/dev_00_AA_01_01_00_01/service0015 ",
    r"InterfacesAdded /org/bluez/hci0/dev_00_AA_01_01_00_01/service0015/char0016 ",
    r"InterfacesAdded /org/bluez/hci0/dev_00_AA_01_01_00_01/service0015/char0016/desc0018 ",
    r"InterfacesAdded /org/bluez/hci0/dev_00_AA_01_01_00_01/service0015/char0019 ",
    r"InterfacesAdded /org/bluez/hci0/dev_00_AA_01_01_00_01/service0015/char001b ",
    r"InterfacesAdded /org/bluez/hci0/dev_00_AA_01_01_00_01 \['org.bluez.Battery1'\]",
    r"char0019 org.bluez.GattCharacteristic1 \{'Value': 'bytes\[01\]'\}",
    r"char0016 org.bluez.GattCharacteristic1 \{'Notifying': 'dbus.Boolean\(True",
    r"notification 0x2A37 (06|0e) ",
    r"OK 4 notifications via PropertiesChanged",
    r"AcquireNotify while StartNotify is active -> org.bluez.Error.InProgress In Progress",
    r"AcquireNotify -> fd \d+ mtu 517",
    r"AcquireNotify packet 06 ",
    r"Disconnect\(\) called",
    r"InterfacesRemoved /org/bluez/hci0/dev_00_AA_01_01_00_01 \['org.bluez.Battery1'\]",
    r"org.bluez.Device1 \{'ServicesResolved': 'dbus.Boolean\(False",
    r"org.bluez.Device1 \{'Connected': 'dbus.Boolean\(False",
    r"OK Connected=false",
    r"done rc 0",
]


# Printed by the probe's own code, whose main loop runs late: present, in no fixed order.
PRESENT = [r"OK ServicesResolved", r"ReadValue 0x2A38 -> bytes\[01\]", r"StartNotify called"]


def positions(lines, name):
    found, start = [], 0
    for pattern in MILESTONES:
        regex = re.compile(pattern)
        for index in range(start, len(lines)):
            if regex.search(lines[index]):
                found.append(index)
                start = index + 1
                break
        else:
            return found, f"{name}: milestone not found (in order): {pattern}"
    return found, None


def main():
    real = open(sys.argv[1], encoding="utf-8").read().splitlines()
    sim = open(sys.argv[2], encoding="utf-8").read().splitlines()
    _, problem = positions(real, "real transcript")
    if problem:
        print(f"compare-probe: the milestones do not describe the real run: {problem}")
        return 1
    _, problem = positions(sim, "hrm-sim")
    if problem:
        print(f"compare-probe: {problem}")
        return 1
    for pattern in PRESENT:
        if not any(re.search(pattern, line) for line in sim):
            print(f"compare-probe: hrm-sim: not found: {pattern}")
            return 1
    print(f"compare-probe: hrm-sim shows all {len(MILESTONES) + len(PRESENT)} milestones of the real run, in order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
