#!/usr/bin/env python3
"""`hrm watch --osc` read by an independent receiver: python-osc's UDP server and dispatcher parse
every datagram hrm sends (hrm's own encoder is not used here).

Each check runs hrm under hrm-sim with --osc pointed at a python-osc server on a free loopback
port, waits for hrm to exit, drains what is still queued on the socket, and compares the messages
with the JSON lines hrm printed. Nothing is timed: order and counts only.

Usage: osc_check.py HRM [--only NAME,...]     (hrm-sim is looked for beside HRM)
Prints `osc-check: <name> ok` per check and `osc-check: PASS`; exits 1 on a failure.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading

from pythonosc import dispatcher, osc_server

PREFIX = "/avatar/parameters/"
FAILURES = []


def fail(check, message):
    FAILURES.append(f"{check}: {message}")
    print(f"osc-check: FAIL {check}: {message}", flush=True)


class Receiver:
    """A python-osc server on 127.0.0.1, collecting (address, args) in arrival order."""

    def __init__(self):
        self.messages = []
        table = dispatcher.Dispatcher()
        table.set_default_handler(lambda address, *args: self.messages.append((address, list(args))))
        self.server = osc_server.ThreadingOSCUDPServer(("127.0.0.1", 0), table)
        self.server.daemon_threads = False
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05})
        self.thread.start()

    def close(self):
        """Stops serving, then reads what is still queued on the socket."""
        self.server.shutdown()
        self.thread.join()
        self.server.socket.setblocking(False)
        while True:
            try:
                data, client = self.server.socket.recvfrom(65536)
            except BlockingIOError:
                break
            self.server.finish_request((data, self.server.socket), client)
        self.server.server_close()
        return self.messages


def run_hrm(hrm, scenario, arguments, timeout=120):
    sim = os.path.join(os.path.dirname(hrm), "hrm-sim")
    command = [sim, "--scenario", scenario, "--", hrm] + arguments
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


def lines_of(stdout):
    out = []
    for line in stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def watch(hrm, scenario, extra, count=6, osc=True):
    receiver = Receiver()
    arguments = ["watch", "--json", "--no-config", "--count", str(count)]
    if osc:
        arguments += ["--osc", f"127.0.0.1:{receiver.port}"]
    status, stdout, stderr = run_hrm(hrm, scenario, arguments + extra)
    messages = receiver.close()
    return status, lines_of(stdout), stderr, messages


def named(messages, name, prefix=PREFIX):
    return [args[0] for address, args in messages if address == prefix + name]


def check_basic(hrm):
    """Every measurement's HR in order; the digits; HRPercent; connected; one toggle per RR."""
    check = "basic"
    status, lines, stderr, messages = watch(hrm, "basic", [])
    if status != 0:
        return fail(check, f"hrm exited {status}: {stderr}")
    measurements = [line for line in lines if line.get("type") == "measurement"]
    bpms = [line["bpm"] for line in measurements]
    if len(bpms) != 6:
        return fail(check, f"{len(bpms)} measurements printed, 6 expected")
    if named(messages, "HR") != bpms:
        return fail(check, f"HR sent {named(messages, 'HR')}, printed {bpms}")
    for name, digit in [("onesHR", lambda b: b % 10), ("tensHR", lambda b: b // 10 % 10),
                        ("hundredsHR", lambda b: b // 100 % 10)]:
        if named(messages, name) != [digit(b) for b in bpms]:
            return fail(check, f"{name} sent {named(messages, name)} for {bpms}")
    percents = named(messages, "HRPercent")
    if len(percents) != len(bpms) or any(abs(p - min(max(b / 200, 0), 1)) > 1e-6 for p, b in zip(percents, bpms)):
        return fail(check, f"HRPercent {percents} for {bpms} (0 to 200)")
    if any(not (0 <= p <= 1) for p in percents):
        return fail(check, f"HRPercent out of [0, 1]: {percents}")
    connected = named(messages, "isHRConnected")
    if not connected or connected[0] is not True or connected[-1] is not False:
        return fail(check, f"isHRConnected {connected}: true first, false last")
    first_hr = next(i for i, (a, _) in enumerate(messages) if a == PREFIX + "HR")
    first_connected = next(i for i, (a, _) in enumerate(messages) if a == PREFIX + "isHRConnected")
    if first_connected > first_hr:
        return fail(check, "isHRConnected true came after the first HR")
    intervals = sum(len(line["rr_ms"]) for line in measurements)
    beats = named(messages, "isHRBeat")
    if len(beats) != intervals:
        return fail(check, f"{len(beats)} isHRBeat toggles for {intervals} RR intervals printed")
    if beats != [i % 2 == 0 for i in range(len(beats))]:
        return fail(check, f"isHRBeat does not toggle: {beats}")
    types = [type(args[0]) for address, args in messages]
    if any(t not in (int, float, bool) for t in types):
        return fail(check, f"unexpected argument types {set(types)}")
    hr_types = {type(args[0]) for address, args in messages if address == PREFIX + "HR"}
    if hr_types != {int}:
        return fail(check, f"HR sent as {hr_types}, not int")
    print(f"osc-check: basic ok ({len(bpms)} HR, {len(beats)} beats for {intervals} RR)", flush=True)


def check_range_and_prefix(hrm):
    """--osc-range and --osc-prefix; --max-hr as HRPercent's top."""
    check = "range"
    status, lines, stderr, messages = watch(hrm, "climb", ["--osc-range", "100:150", "--osc-prefix", "/hrm"], count=8)
    if status != 0:
        return fail(check, f"hrm exited {status}: {stderr}")
    bpms = [line["bpm"] for line in lines if line.get("type") == "measurement"]
    percents = named(messages, "HRPercent", prefix="/hrm/")
    expected = [min(max((b - 100) / 50, 0), 1) for b in bpms]
    if len(percents) != len(bpms) or any(abs(p - e) > 1e-6 for p, e in zip(percents, expected)):
        return fail(check, f"HRPercent {percents} for {bpms} over 100:150")
    if any(address.startswith(PREFIX) for address, _ in messages):
        return fail(check, "messages under /avatar/parameters/ despite --osc-prefix /hrm")
    status, lines, stderr, messages = watch(hrm, "basic", ["--max-hr", "180"], count=3)
    bpms = [line["bpm"] for line in lines if line.get("type") == "measurement"]
    percents = named(messages, "HRPercent")
    if status != 0 or any(abs(p - b / 180) > 1e-6 for p, b in zip(percents, bpms)) or len(percents) != 3:
        return fail(check, f"with --max-hr 180: HRPercent {percents} for {bpms}")
    print("osc-check: range ok", flush=True)


def check_drop(hrm):
    """isHRConnected false on a drop and true again on the reconnect, false at the end."""
    check = "drop"
    status, lines, stderr, messages = watch(hrm, "drops", [], count=12)
    if status != 0:
        return fail(check, f"hrm exited {status}: {stderr}")
    connected = named(messages, "isHRConnected")
    if connected[:3] != [True, False, True] or connected[-1] is not False:
        return fail(check, f"isHRConnected {connected} across a drop")
    drop_at = next(i for i, (a, args) in enumerate(messages) if a == PREFIX + "isHRConnected" and args[0] is False)
    if not any(a == PREFIX + "HR" for a, _ in messages[drop_at:]):
        return fail(check, "no HR after the reconnect")
    bpms = [line["bpm"] for line in lines if line.get("type") == "measurement"]
    if named(messages, "HR") != bpms:
        return fail(check, f"HR sent {named(messages, 'HR')}, printed {bpms}")
    intervals = sum(len(line["rr_ms"]) for line in lines if line.get("type") == "measurement")
    if len(named(messages, "isHRBeat")) != intervals:
        return fail(check, f"{len(named(messages, 'isHRBeat'))} toggles for {intervals} RR intervals")
    print(f"osc-check: drop ok (isHRConnected {connected})", flush=True)


def check_several(hrm):
    """With several straps, --osc-device follows the one named; the others send nothing."""
    check = "several"
    status, lines, stderr, messages = watch(
        hrm, "two-straps", ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02", "--osc-device", "tickr"], count=8)
    if status != 0:
        return fail(check, f"hrm exited {status}: {stderr}")
    wanted = [line["bpm"] for line in lines
              if line.get("type") == "measurement" and line.get("device") == "C0:FF:EE:00:00:02"]
    if not wanted or named(messages, "HR") != wanted:
        return fail(check, f"HR sent {named(messages, 'HR')}, the TICKR's {wanted}")
    print(f"osc-check: several ok ({len(wanted)} of the TICKR's)", flush=True)


def check_without_rr(hrm):
    """A strap that sends no RR: isHRBeat from the heart rate (72 bpm: every 0.83 s)."""
    check = "no-rr"
    scenario = {
        "description": "no RR",
        "devices": [{
            "address": "D2:4B:7E:10:20:41", "name": "Plain Strap", "rssi": -50, "uuids": ["180d"],
            "known": True, "battery": None, "mtu": 23,
            "heartRate": {"mode": "frames", "interval": 1.0, "frames": ["0048"] * 40},
        }],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(scenario, file)
    try:
        status, lines, stderr, messages = watch(hrm, file.name, [], count=5)
    finally:
        os.unlink(file.name)
    if status != 0:
        return fail(check, f"hrm exited {status}: {stderr}")
    beats = named(messages, "isHRBeat")
    # Five measurements a second apart: at least 4 s of beats every 0.83 s were due by the end.
    if len(beats) < 4 or beats != [i % 2 == 0 for i in range(len(beats))]:
        return fail(check, f"isHRBeat {beats} from a heart rate of 72 over 5 measurements")
    print(f"osc-check: no-rr ok ({len(beats)} beats)", flush=True)


def check_nothing_listening(hrm):
    """Nothing listening: hrm goes on, says so once, and counts what was lost."""
    check = "refused"
    receiver = Receiver()
    port = receiver.port
    receiver.close()  # the port is free again: nothing listens there
    status, stdout, stderr = run_hrm(hrm, "basic", ["watch", "--json", "--no-config", "--count", "5",
                                                    "--osc", f"127.0.0.1:{port}"])
    lines = lines_of(stdout)
    errors = [line for line in lines if line.get("type") == "error" and line.get("code") == "osc_send_failed"]
    measurements = [line for line in lines if line.get("type") == "measurement"]
    if status != 0 or len(measurements) != 5:
        return fail(check, f"status {status}, {len(measurements)} measurements: {stderr}")
    if len(errors) != 1:
        return fail(check, f"{len(errors)} osc_send_failed events, 1 expected")
    if "could not be sent to 127.0.0.1" not in stderr:
        return fail(check, f"no count of the messages lost on stderr: {stderr}")
    print("osc-check: refused ok", flush=True)


def check_bad_values(hrm):
    """Bad --osc values: exit 64 with a clear message, before the strap is touched."""
    check = "bad-values"
    for value, words in [("127.0.0.1:", "no port"), ("127.0.0.1:0", "not from 1 to 65535"),
                         ("127.0.0.1:65536", "not from 1 to 65535"),
                         ("no-such-host.invalid:9000", "cannot resolve")]:
        status, stdout, stderr = run_hrm(hrm, "basic", ["watch", "--json", "--no-config", "--osc", value])
        if status != 64 or words not in stderr:
            return fail(check, f"--osc {value}: status {status}, stderr {stderr!r}")
        if any(line.get("type") == "status" and line.get("state") == "connecting" for line in lines_of(stdout)):
            return fail(check, f"--osc {value}: the strap was touched")
    status, _, stderr = run_hrm(hrm, "basic", ["watch", "--no-config", "--osc-range", "100:150"])
    if status != 64 or "need --osc" not in stderr:
        return fail(check, f"--osc-range without --osc: status {status}, {stderr!r}")
    print("osc-check: bad-values ok", flush=True)


CHECKS = {
    "basic": check_basic, "range": check_range_and_prefix, "drop": check_drop, "several": check_several,
    "no-rr": check_without_rr, "refused": check_nothing_listening, "bad-values": check_bad_values,
}


def main():
    hrm = sys.argv[1]
    only = CHECKS.keys()
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1].split(",")
    for name in only:
        CHECKS[name](hrm)
    if FAILURES:
        print("osc-check: FAILED", flush=True)
        sys.exit(1)
    print("osc-check: PASS", flush=True)


if __name__ == "__main__":
    main()
