# bleak (pip install bleak) against hrm-sim: `hrm-sim -- python3 Tests/Fidelity/bleak_probe.py start|acquire`.
# Not run by CI yet: see the issue notes (bleak fails most runs against hrm-sim today).
import asyncio, sys
from bleak import BleakScanner, BleakClient
HRM = "00002a37-0000-1000-8000-00805f9b34fb"
async def main(acquire):
    dev = await BleakScanner.find_device_by_filter(lambda d, ad: "0000180d-0000-1000-8000-00805f9b34fb" in ad.service_uuids, timeout=5)
    print("found", dev)
    got = []
    async with BleakClient(dev) as c:
        loc = await c.read_gatt_char("00002a38-0000-1000-8000-00805f9b34fb")
        print("location", loc.hex())
        kw = {"bluez": {"use_start_notify": not acquire}}
        await c.start_notify(HRM, lambda ch, data: got.append(bytes(data).hex()), **kw)
        await asyncio.sleep(3.5)
        await c.stop_notify(HRM)
    print("notifications", got)
    return 0 if len(got) >= 2 else 1
sys.exit(asyncio.run(main(sys.argv[1] == "acquire")))
