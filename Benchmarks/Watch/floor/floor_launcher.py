#!/usr/bin/python3
"""Stands in for `hrm watch ADDRESS --json --duration N` in watch_bench.py, to measure the floor:
connects to the strap on the bus hrm-sim serves, AcquireNotify on 0x2A37, then execs
floor_reader with the socket, so the harness measures that C reader in hrm's place.

    make bench-watch-floor
"""
import os
import sys
import time

import dbus

HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def main():
    address = sys.argv[2]
    duration = sys.argv[sys.argv.index("--duration") + 1]
    bus = dbus.SystemBus()
    manager = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    device = "/org/bluez/hci0/dev_" + address.replace(":", "_")
    bus.get_object("org.bluez", device).Connect(dbus_interface="org.bluez.Device1", timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for path, interfaces in manager.GetManagedObjects(timeout=5).items():
            characteristic = interfaces.get("org.bluez.GattCharacteristic1", {})
            if path.startswith(device) and characteristic.get("UUID") == HEART_RATE_MEASUREMENT:
                fd, _mtu = bus.get_object("org.bluez", path).AcquireNotify(
                    {}, dbus_interface="org.bluez.GattCharacteristic1", timeout=5)
                socket = fd.take()
                os.set_inheritable(socket, True)
                # FLOOR_READER: another reader of the same socket (variants.py's).
                reader = os.environ.get("FLOOR_READER") or os.path.join(
                    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".build", "floor_reader")
                os.execv(reader, [reader, str(socket), duration])
        time.sleep(0.05)
    sys.exit("floor_launcher: no Heart Rate Measurement characteristic")


if __name__ == "__main__":
    main()
