#!/usr/bin/python3
"""A consumer of hrm's relay on real BlueZ, as a phone or Zwift would be one: a central on its own
controller, written with python3-dbus against bluetoothd (run in the realbluez lab's guest by
Tests/Fidelity/lab-e2e.sh).

    lab_consumer.py ADAPTER RELAY_ADDRESS COUNT

Scans on ADAPTER (hci3, say) for Heart Rate advertisers, waits for RELAY_ADDRESS (hrm relay's
controller), checks its advertisement (name, appearance, services), connects, reads the body
sensor location (0x2A38), subscribes to 0x2A37, takes COUNT notifications, unsubscribes and
disconnects. Prints one JSON line:
{"name": ..., "appearance": N, "uuids": [...], "location": hex, "values": [[unix_time, hex], ...]}.
Every wait has a limit (60 s for the scan and the connection, 90 s for the values: they only prove
"not hung" under emulation); a failure prints why on stderr and exits 1.
"""
import json
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = "org.bluez"
DEVICE = "org.bluez.Device1"
CHARACTERISTIC = "org.bluez.GattCharacteristic1"
PROPERTIES = "org.freedesktop.DBus.Properties"


def uuid(short):
    return "0000%04x-0000-1000-8000-00805f9b34fb" % short


STARTED = time.monotonic()


def say(what):
    """A step, with the seconds since the start, on stderr: what a failed CI run shows."""
    print("lab-consumer: %.2f s: %s" % (time.monotonic() - STARTED, what), file=sys.stderr, flush=True)


def fail(why):
    print("lab-consumer: FAILED " + why, file=sys.stderr, flush=True)
    raise SystemExit(1)


class Consumer:
    def __init__(self, adapter, address, count):
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        self.bus = dbus.SystemBus()
        self.adapter_path = "/org/bluez/" + adapter
        self.device_path = self.adapter_path + "/dev_" + address.upper().replace(":", "_")
        self.count = count
        self.values = []
        self.loop = GLib.MainLoop()

    def objects(self):
        manager = dbus.Interface(self.bus.get_object(BLUEZ, "/"), "org.freedesktop.DBus.ObjectManager")
        return manager.GetManagedObjects(timeout=10)

    def run_until(self, check, seconds, what):
        """Runs the main loop until check() is true (tested every 0.1 s) or `seconds` pass. The
        timer lives only while the loop runs: a timer left from an earlier wait would quit a
        later one at once."""
        deadline = time.monotonic() + seconds
        if not check():
            def tick():
                if check() or time.monotonic() > deadline:
                    self.loop.quit()
                    return False
                return True

            GLib.timeout_add(100, tick)
            self.loop.run()
        if not check():
            device = self.device_properties() or {}
            characteristics = sorted(
                str(interfaces[CHARACTERISTIC]["UUID"])[4:8] for path, interfaces in self.objects().items()
                if CHARACTERISTIC in interfaces and path.startswith(self.device_path + "/"))
            fail("%s: not within %d s (Connected %s, ServicesResolved %s, characteristics %s)" % (
                what, seconds, device.get("Connected"), device.get("ServicesResolved"), characteristics))
        say(what)

    def device_properties(self):
        return self.objects().get(self.device_path, {}).get(DEVICE)

    def scan(self):
        adapter = dbus.Interface(self.bus.get_object(BLUEZ, self.adapter_path), "org.bluez.Adapter1")
        adapter.SetDiscoveryFilter({"UUIDs": dbus.Array([uuid(0x180D)], signature="s"), "Transport": "le"},
                                   timeout=10)
        adapter.StartDiscovery(timeout=10)
        self.run_until(lambda: self.device_properties() is not None, 60, "the relay's advertisement")
        adapter.StopDiscovery(timeout=10)
        return self.device_properties()

    def characteristic(self, short):
        for path, interfaces in self.objects().items():
            properties = interfaces.get(CHARACTERISTIC)
            if properties and path.startswith(self.device_path + "/") and str(properties["UUID"]) == uuid(short):
                return path
        return None

    def main(self):
        say("on the bus as %s" % self.bus.get_unique_name())

        def owner_changed(name, old, new):
            if name.startswith(":") and not new:
                say("%s left the bus" % name)

        self.bus.add_signal_receiver(
            owner_changed, signal_name="NameOwnerChanged", dbus_interface="org.freedesktop.DBus",
            bus_name="org.freedesktop.DBus")
        found = self.scan()
        name = str(found.get("Name", found.get("Alias", "")))
        appearance = int(found.get("Appearance", 0))
        uuids = sorted(str(u) for u in found.get("UUIDs", []))
        device = dbus.Interface(self.bus.get_object(BLUEZ, self.device_path), DEVICE)
        say("connecting")
        device.Connect(timeout=60)
        say("connected")
        self.run_until(
            lambda: bool((self.device_properties() or {}).get("ServicesResolved", False))
            and self.characteristic(0x2A37) is not None and self.characteristic(0x2A38) is not None,
            60, "the relay's services")
        location_path = self.characteristic(0x2A38)
        if location_path is None:
            fail("the relay has no Body Sensor Location (0x2A38)")
        location = dbus.Interface(self.bus.get_object(BLUEZ, location_path), CHARACTERISTIC).ReadValue(
            {}, timeout=10)
        measurement_path = self.characteristic(0x2A37)

        def changed(interface, changes, invalidated):
            if interface == CHARACTERISTIC and "Value" in changes:
                self.values.append([time.time(), bytes(changes["Value"]).hex()])

        self.bus.add_signal_receiver(
            changed, signal_name="PropertiesChanged", dbus_interface=PROPERTIES, bus_name=BLUEZ,
            path=measurement_path)
        measurement = dbus.Interface(self.bus.get_object(BLUEZ, measurement_path), CHARACTERISTIC)
        measurement.StartNotify(timeout=10)
        say("subscribed to %s" % measurement_path)
        self.run_until(lambda: len(self.values) >= self.count, 90, "%d notifications" % self.count)
        measurement.StopNotify(timeout=10)
        print(json.dumps({
            "name": name, "appearance": appearance, "uuids": uuids, "location": bytes(location).hex(),
            "values": self.values,
        }), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        fail("usage: lab_consumer.py ADAPTER RELAY_ADDRESS COUNT")
    consumer = Consumer(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    try:
        consumer.main()
    except dbus.exceptions.DBusException as error:
        fail("%s: %s" % (error.get_dbus_name(), error.get_dbus_message()))
    finally:
        # However it ended: the link taken down, so that the relay sees the consumer go.
        try:
            dbus.Interface(consumer.bus.get_object(BLUEZ, consumer.device_path), DEVICE).Disconnect(timeout=30)
        except dbus.exceptions.DBusException:
            pass
