#!/usr/bin/python3
"""python3-dbus client for the D-Bus benchmark: N blocking calls of org.example.Bench.Ping on
BUS_NAME at /bench (served by dbus-bench), printing the median and p99 round trip in microseconds."""
import sys, time, dbus

address, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
bus = dbus.bus.BusConnection(address)
ping = bus.get_object(name, "/bench", introspect=False).get_dbus_method("Ping", "org.example.Bench")
for _ in range(200):
    ping(dbus.UInt32(1))
samples = []
for i in range(count):
    t = time.perf_counter_ns()
    ping(dbus.UInt32(i))
    samples.append(time.perf_counter_ns() - t)
samples.sort()
print(samples[len(samples) // 2] / 1000, samples[min(len(samples) - 1, len(samples) * 99 // 100)] / 1000)
