#!/usr/bin/env python3
"""Stands in for `hrm watch ADDRESS --json --duration N` in watch_bench.py, as a plain bleak
client would: connect to the address, subscribe to Heart Rate Measurement (bleak takes
AcquireNotify on BlueZ where it is offered), print one JSON line per notification with the
heart rate decoded as the spec says, disconnect after N seconds.

Run with the bleak venv's python first on PATH (`make bench-watch-compare` does).
"""
import asyncio
import json
import sys

from bleak import BleakClient

MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def on_measurement(_characteristic, data: bytearray):
    flags = data[0]
    bpm = int.from_bytes(data[1:3], "little") if flags & 0x01 else data[1]
    print(json.dumps({"event": "measurement", "bpm": bpm}), flush=True)


async def watch(address, duration):
    async with BleakClient(address, timeout=20) as client:
        await client.start_notify(MEASUREMENT, on_measurement)
        await asyncio.sleep(duration)


def main():
    address = sys.argv[2]
    duration = float(sys.argv[sys.argv.index("--duration") + 1])
    asyncio.run(watch(address, duration))


if __name__ == "__main__":
    main()
