#!/usr/bin/env python3
"""A recording of a Polar H10 with its streams, as hrm record --ecg --acc writes it: a measurement a
second, ECG frames (73 samples at 130 Hz), raw acceleration frames (40 samples at 200 Hz) and an
ecg_beat line per R peak, for timing the readers on one (see README.md, "Recordings with a Polar
H10's streams"). The samples are a formula, not an ECG.

Usage: h10_recording.py OUT.jsonl [SECONDS (3600)] [streams|plain]
  plain writes the same recording without its pmd and ecg_beat lines.
"""
import math, random, time, sys
DEV = "A0:9E:1A:12:34:56"
START = 1_795_676_400_000
def stamp(ms):
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%03dZ" % m
def frame(mtype, ts, ftype, content):
    return bytes([mtype]) + ts.to_bytes(8, "little") + bytes([ftype]) + content
seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
streams = sys.argv[3] != "plain" if len(sys.argv) > 3 else True
out = ['{"type":"recording","format":1,"hrm":"0.1.0","start":"%s","command":"record"}' % stamp(START)]
def line(t, rest):
    out.append('{"type":%s,"time":"%s","mono_ms":%d,"device":"%s"%s}' % (rest[0], stamp(START + t), t, DEV, rest[1]))
events = []
events.append((100, ('"status"', ',"state":"connected"')))
events.append((180, ('"info"', ',"name":"Polar H10 12345678","battery":87')))
S = 849_000_000_000_000_000
rng = random.Random(1)
for sec in range(1, seconds + 1):
    events.append((sec * 1000, ('"measurement"', ',"bpm":70,"contact":"detected","energy_kj":null,"rr_1024":[878],"rr_ms":[857.421875],"format":"uint8","zone":1,"hex":"10466e03"')))
if streams:
    period = 1e9 / 130
    n = 0; k = 0
    while True:
        ts = int(S + (73 * k + 72) * period)
        t_ms = int((ts - S) / 1e6) + 1030
        if t_ms > seconds * 1000: break
        content = b"".join(int(300 * math.sin((73 * k + j) / 20) + (1200 if (73*k+j) % 110 == 0 else 0)).to_bytes(3, "little", signed=True) for j in range(73))
        events.append((t_ms, ('"pmd"', ',"measurement":"ecg","rate_hz":130,"hex":"%s"' % frame(0, ts, 0, content).hex())))
        k += 1
    f = 0
    while True:
        ts = S + 20_000_000 + (40 * f + 39) * 5_000_000
        t_ms = int((ts - S) / 1e6) + 1025
        if t_ms > seconds * 1000: break
        content = b"".join(v.to_bytes(2, "little", signed=True) for m in range(40) for v in (int(300*math.sin((40*f+m)/15)), -980, 40))
        events.append((t_ms, ('"pmd"', ',"measurement":"acc","rate_hz":200,"range_g":8,"hex":"%s"' % frame(2, ts, 1, content).hex())))
        f += 1
    b = 0; prev = None
    while True:
        ts = S + int(b * 110 * period)
        t_ms = int((ts - S) / 1e6) + 1450
        if t_ms > seconds * 1000: break
        rr = "null" if prev is None else "%.3f" % ((ts - prev) / 1e6)
        events.append((t_ms, ('"ecg_beat"', ',"sensor_ns":%d,"rr_ms":%s' % (ts, rr))))
        prev = ts; b += 1
events.sort(key=lambda e: e[0])
for t, rest in events: line(t, rest)
out.append('{"type":"status","time":"%s","mono_ms":%d,"state":"stopped"}' % (stamp(START + seconds * 1000 + 500), seconds * 1000 + 500))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
