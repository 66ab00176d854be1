# bleak (an established BlueZ client library, unmodified) against hrm-sim:
#   hrm-sim --scenario basic -- python3 Tests/Fidelity/bleak_probe.py start|acquire
# Finds the strap by its 0x180D advertisement, connects, reads Body Sensor Location, subscribes to
# Heart Rate Measurement with StartNotify or AcquireNotify, checks the frames and that they stop
# after stop_notify, disconnects. Exit 0 only when every step worked. bleak-check.sh runs it.
import asyncio
import importlib.metadata
import sys

from bleak import BleakClient, BleakScanner

HEART_RATE_SERVICE = "0000180d-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"


def heart_rate(frame):
    """The BPM of a Heart Rate Measurement frame (flags bit 0: UINT16 little-endian)."""
    if frame[0] & 1:
        return frame[1] | frame[2] << 8
    return frame[1]


def fail(message):
    print("FAIL", message)
    return 1


async def main(mode):
    print("bleak", importlib.metadata.version("bleak"), "mode", mode)
    device = await BleakScanner.find_device_by_filter(
        lambda d, ad: HEART_RATE_SERVICE in ad.service_uuids, timeout=10
    )
    if device is None:
        return fail("no device advertising 0x180D")
    print("found", device.address, device.name)
    frames = []
    async with BleakClient(device) as client:
        location = await client.read_gatt_char(LOCATION)
        print("location", bytes(location).hex())
        if bytes(location) != b"\x01":
            return fail("Body Sensor Location is not 01 (chest)")
        options = {"bluez": {"use_start_notify": mode == "start"}}
        await client.start_notify(MEASUREMENT, lambda _, data: frames.append(bytes(data)), **options)
        await asyncio.sleep(3.5)
        await client.stop_notify(MEASUREMENT)
        stopped_at = len(frames)
        await asyncio.sleep(1.5)
        if len(frames) != stopped_at:
            return fail("notifications went on after stop_notify")
    print("notifications", [frame.hex() for frame in frames])
    if len(frames) < 3:
        return fail(f"{len(frames)} notifications in 3.5 s at 1 Hz, expected at least 3")
    rates = [heart_rate(frame) for frame in frames]
    if not all(30 <= rate <= 220 for rate in rates):
        return fail(f"implausible heart rates {rates}")
    print("OK", mode, rates)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("start", "acquire"):
        sys.exit("usage: bleak_probe.py start|acquire")
    sys.exit(asyncio.run(main(sys.argv[1])))
