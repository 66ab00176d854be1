#!/usr/bin/python3
"""An independent consumer of hrm's relay, written with python3-dbus: it does what bluetoothd
does with a registered GATT application, not what hrm-sim's Swift code does.

    relay_consumer.py SIM_LOG COUNT

Waits (by reading hrm-sim's log, up to 60 s, only to prove "not hung") for hrm to register its
application and advertisement, reads them back with GetManagedObjects and GetAll, checks every
type and flag bluetoothd 5.66 relies on, reads 0x2A38, subscribes to 0x2A37 with StartNotify,
takes COUNT values from PropertiesChanged, calls StopNotify, and prints one JSON line:
{"values": [hex...], "location": hex, "advertisement": {...}}. Any deviation exits 1 with why.
"""
import json
import os
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

SERVICE = "org.bluez.GattService1"
CHARACTERISTIC = "org.bluez.GattCharacteristic1"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"


def uuid(short):
    return "0000%04x-0000-1000-8000-00805f9b34fb" % short


def fail(why):
    print("relay-check: FAILED " + why, file=sys.stderr)
    sys.exit(1)


def registered(log_path, deadline):
    """The owner and paths of the application and the advertisement, from hrm-sim's log."""
    application = advertisement = None
    while time.monotonic() < deadline:
        try:
            with open(log_path) as log:
                for line in log:
                    record = json.loads(line)
                    if record.get("event") == "application-registered":
                        application = (record["owner"], record["path"])
                    if record.get("event") == "advertisement-registered":
                        advertisement = (record["owner"], record["path"])
        except (OSError, ValueError):
            pass
        if application and advertisement:
            return application, advertisement
        time.sleep(0.05)
    fail("hrm registered no application and advertisement within 60 s")


def main():
    log_path, count = sys.argv[1], int(sys.argv[2])
    deadline = time.monotonic() + 60
    (owner, root), (_, advertisement_path) = registered(log_path, deadline)
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])

    objects = bus.call_blocking(
        owner, root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", "", [], timeout=10)
    services = {p: i[SERVICE] for p, i in objects.items() if SERVICE in i}
    characteristics = {str(i[CHARACTERISTIC]["UUID"]): (p, i[CHARACTERISTIC]) for p, i in objects.items()
                       if CHARACTERISTIC in i}
    for path, properties in services.items():
        if not isinstance(properties["UUID"], dbus.String) or not isinstance(properties["Primary"], dbus.Boolean):
            fail("service %s: UUID must be s and Primary b" % path)
    wanted = {uuid(0x180D), uuid(0x180F), uuid(0x180A)}
    if {str(p["UUID"]) for p in services.values()} != wanted:
        fail("services %s, not %s" % (sorted(str(p["UUID"]) for p in services.values()), sorted(wanted)))
    flags = {uuid(0x2A37): ["notify"], uuid(0x2A38): ["read"], uuid(0x2A19): ["read", "notify"]}
    for short, expected in flags.items():
        if short not in characteristics:
            fail("no characteristic %s" % short)
        path, properties = characteristics[short]
        if [str(f) for f in properties["Flags"]] != expected:
            fail("%s: Flags %s, not %s" % (short, list(properties["Flags"]), expected))
        if properties["Service"] not in services:
            fail("%s: Service %s is not a service of the application" % (short, properties["Service"]))
        if properties["Value"].signature != "y":
            fail("%s: Value must be ay" % short)

    advertisement = bus.call_blocking(
        owner, advertisement_path, "org.freedesktop.DBus.Properties", "GetAll", "s", [ADVERTISEMENT], timeout=10)
    if str(advertisement["Type"]) != "peripheral" or not bool(advertisement["Discoverable"]):
        fail("the advertisement must be a discoverable peripheral: %s" % dict(advertisement))
    if uuid(0x180D) not in [str(u) for u in advertisement["ServiceUUIDs"]]:
        fail("the advertisement does not name Heart Rate")
    if not isinstance(advertisement["Appearance"], dbus.UInt16) or int(advertisement["Appearance"]) != 0x0341:
        fail("Appearance must be q 0x0341")

    location_path, _ = characteristics[uuid(0x2A38)]
    location = bus.call_blocking(owner, location_path, CHARACTERISTIC, "ReadValue", "a{sv}", [{}], timeout=10)

    measurement_path, _ = characteristics[uuid(0x2A37)]
    values = []
    loop = GLib.MainLoop()

    def changed(interface, changes, invalidated):
        if interface == CHARACTERISTIC and "Value" in changes:
            values.append(bytes(changes["Value"]).hex())
            if len(values) >= count:
                loop.quit()

    bus.add_signal_receiver(
        changed, signal_name="PropertiesChanged", dbus_interface="org.freedesktop.DBus.Properties",
        bus_name=owner, path=measurement_path)
    bus.call_blocking(owner, measurement_path, CHARACTERISTIC, "StartNotify", "", [], timeout=10)
    GLib.timeout_add_seconds(60, lambda: (fail("%d of %d values in 60 s" % (len(values), count)), False)[1])
    loop.run()
    bus.call_blocking(owner, measurement_path, CHARACTERISTIC, "StopNotify", "", [], timeout=10)
    print(json.dumps({
        "values": values, "location": bytes(location).hex(),
        "advertisement": {"LocalName": str(advertisement["LocalName"])},
    }), flush=True)


if __name__ == "__main__":
    main()
