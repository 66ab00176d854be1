#!/usr/bin/env python3
"""A FIT file from hrm's FIT encoder read by independent readers: Garmin's FIT SDK
(`garmin-fit-sdk` on PyPI) and fitdecode (PyPI), each checked against what the writer meant.

Usage: fit_check.py FILE --expect-json EXPECTED.json

EXPECTED.json (written by Tests/FITTests/FITIndependentTests.swift):
  records            number of record messages
  heart_rates        their heart rates in order (bpm)
  record_times       their timestamps in order (Unix seconds)
  rr_ms              every RR interval in order (milliseconds, from the hrv messages with the
                     0xFFFF padding trimmed), compared to 1 ms
  avg_heart_rate, max_heart_rate   the session's and lap's (null when not written)
  total_timer_time, total_elapsed_time   seconds, session, lap (and activity's timer), to 1 ms
  start_time, end_time   Unix seconds: session and lap start_time, their timestamps
  sport              the profile's name (e.g. "running")
  timer_starts, timer_stops   how many timer events of type start and stop_all
  serial_number      file_id's (null when not written)

fitdecode also checks that the timestamps of the messages never go back in file order, and that
the hrv messages hold five intervals each (the last padded).

The FIT SDK must also find the file a FIT file (is_fit), its CRCs right (check_integrity) and
read it without errors. Prints PASS or FAIL per reader and check; exits 0 when all passed, 1 when
any failed, 2 when a reader cannot be imported.
"""

import argparse
import datetime
import json
import sys

FIT_EPOCH = 631065600  # 1989-12-31T00:00:00Z in Unix seconds


def unix_seconds(value):
    """A reader's date_time (datetime, or raw FIT seconds) in Unix seconds."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return int(round(value.timestamp()))
    if isinstance(value, (int, float)):
        return int(value) + FIT_EPOCH
    return value


class Checker:
    def __init__(self, reader):
        self.reader = reader
        self.failures = 0

    def equal(self, what, actual, expected):
        if actual == expected:
            print(f"fit-check: PASS {self.reader}: {what}")
        else:
            self.failures += 1
            shown_actual, shown_expected = actual, expected
            if isinstance(actual, list) and isinstance(expected, list):
                first = next((i for i, (a, e) in enumerate(zip(actual, expected)) if a != e), None)
                if first is None:  # one is a prefix of the other
                    first = min(len(actual), len(expected))
                shown_actual = f"{len(actual)} values, from index {first}: {actual[first:first + 3]!r}"
                shown_expected = f"{len(expected)} values, from index {first}: {expected[first:first + 3]!r}"
            print(f"fit-check: FAIL {self.reader}: {what}: got {shown_actual}, expected {shown_expected}")

    def close(self, what, actual, expected, tolerance):
        if actual is not None and expected is not None and abs(actual - expected) <= tolerance:
            print(f"fit-check: PASS {self.reader}: {what}")
        elif actual is None and expected is None:
            print(f"fit-check: PASS {self.reader}: {what} (absent)")
        else:
            self.failures += 1
            print(f"fit-check: FAIL {self.reader}: {what}: got {actual!r}, expected {expected!r}")

    def fail(self, what):
        self.failures += 1
        print(f"fit-check: FAIL {self.reader}: {what}")


def rr_from_hrv_times(hrv_times):
    """RR intervals in ms from the hrv messages' `time` arrays (seconds), padding trimmed: None
    (the SDK's "no value") or 65.535 s (0xFFFF, if a reader keeps it raw)."""
    rr = []
    for times in hrv_times:
        if times is None:
            continue
        if not isinstance(times, (list, tuple)):
            times = [times]
        for value in times:
            if value is None or value >= 65.535:
                continue
            rr.append(int(round(value * 1000)))
    return rr


def compare(checker, expected, summary):
    """The figures both readers give, against the expectations. `summary` holds: records (list of
    (time, heart rate)), rr_ms, events (list of (event, event_type)), session, lap, activity,
    file_id (dicts of field name to value)."""
    records = summary["records"]
    checker.equal("number of records", len(records), expected["records"])
    checker.equal("heart rates in order", [hr for _, hr in records], expected["heart_rates"])
    checker.equal("record timestamps in order", [unix_seconds(t) for t, _ in records], expected["record_times"])
    rr = summary["rr_ms"]
    expected_rr = expected["rr_ms"]
    if len(rr) == len(expected_rr) and all(abs(a - e) <= 1 for a, e in zip(rr, expected_rr)):
        print(f"fit-check: PASS {checker.reader}: {len(rr)} RR intervals in order, to 1 ms")
    else:
        checker.equal("RR intervals in order (ms)", rr, expected_rr)
    events = summary["events"]
    starts = sum(1 for event, kind in events if event == "timer" and kind == "start")
    stops = sum(1 for event, kind in events if event == "timer" and kind == "stop_all")
    checker.equal("timer start events", starts, expected["timer_starts"])
    checker.equal("timer stop_all events", stops, expected["timer_stops"])
    checker.equal("timer events alternate start, stop_all", [kind for event, kind in events if event == "timer"],
                  ["start", "stop_all"] * expected["timer_starts"])

    file_id = summary["file_id"]
    checker.equal("file_id type", file_id.get("type"), "activity")
    checker.equal("file_id manufacturer", file_id.get("manufacturer"), "development")
    checker.equal("file_id serial_number", file_id.get("serial_number"), expected["serial_number"])
    checker.equal("file_id time_created", unix_seconds(file_id.get("time_created")), expected["start_time"])

    for name in ("session", "lap"):
        message = summary[name]
        if message is None:
            checker.fail(f"no {name} message")
            continue
        checker.close(f"{name} total_timer_time", message.get("total_timer_time"), expected["total_timer_time"], 0.0011)
        checker.close(f"{name} total_elapsed_time", message.get("total_elapsed_time"),
                      expected["total_elapsed_time"], 0.0011)
        checker.equal(f"{name} avg_heart_rate", message.get("avg_heart_rate"), expected["avg_heart_rate"])
        checker.equal(f"{name} max_heart_rate", message.get("max_heart_rate"), expected["max_heart_rate"])
        checker.equal(f"{name} start_time", unix_seconds(message.get("start_time")), expected["start_time"])
        checker.equal(f"{name} timestamp", unix_seconds(message.get("timestamp")), expected["end_time"])
    session = summary["session"] or {}
    checker.equal("session sport", session.get("sport"), expected["sport"])
    checker.equal("session sub_sport", session.get("sub_sport"), "generic")
    checker.equal("session num_laps", session.get("num_laps"), 1)
    activity = summary["activity"]
    if activity is None:
        checker.fail("no activity message")
    else:
        checker.close("activity total_timer_time", activity.get("total_timer_time"), expected["total_timer_time"], 0.0011)
        checker.equal("activity num_sessions", activity.get("num_sessions"), 1)
        checker.equal("activity type", activity.get("type"), "manual")


def check_garmin_sdk(data, expected):
    from garmin_fit_sdk import Decoder, Stream

    checker = Checker("garmin-fit-sdk")
    decoder = Decoder(Stream.from_byte_array(bytearray(data)))
    checker.equal("is_fit", decoder.is_fit(), True)
    checker.equal("check_integrity (header and file CRC)", decoder.check_integrity(), True)
    decoder = Decoder(Stream.from_byte_array(bytearray(data)))
    messages, errors = decoder.read()
    checker.equal("read errors", [str(error) for error in errors], [])

    def first(key):
        found = messages.get(key) or []
        return found[0] if found else None

    summary = {
        "records": [(m.get("timestamp"), m.get("heart_rate")) for m in messages.get("record_mesgs", [])],
        "rr_ms": rr_from_hrv_times([m.get("time") for m in messages.get("hrv_mesgs", [])]),
        "events": [(m.get("event"), m.get("event_type")) for m in messages.get("event_mesgs", [])],
        "session": first("session_mesgs"),
        "lap": first("lap_mesgs"),
        "activity": first("activity_mesgs"),
        "file_id": first("file_id_mesgs") or {},
    }
    compare(checker, expected, summary)
    return checker.failures


def check_fitdecode(path, expected):
    import fitdecode

    checker = Checker("fitdecode")
    summary = {"records": [], "rr_ms": [], "events": [], "session": None, "lap": None, "activity": None,
               "file_id": {}}
    hrv_times = []
    timestamps = []  # every data message's timestamp, in file order
    crc_checked = False
    # CRC checks on (the default raises on a mismatch); every message kept in order.
    with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE) as reader:
        for frame in reader:
            if isinstance(frame, fitdecode.FitCRC):
                crc_checked = crc_checked or frame.matched
                continue
            if not isinstance(frame, fitdecode.FitDataMessage):
                continue
            values = {field.name: field.value for field in frame.fields}
            if values.get("timestamp") is not None:
                timestamps.append(unix_seconds(values["timestamp"]))
            if frame.name == "record":
                summary["records"].append((values.get("timestamp"), values.get("heart_rate")))
            elif frame.name == "hrv":
                hrv_times.append(values.get("time"))
            elif frame.name == "event":
                summary["events"].append((values.get("event"), values.get("event_type")))
            elif frame.name in ("session", "lap", "activity") and summary[frame.name] is None:
                summary[frame.name] = values
            elif frame.name == "file_id":
                summary["file_id"] = values
    checker.equal("file CRC matched", crc_checked, True)
    # FIT readers (and Garmin's best practices for activity files) expect time order.
    backwards = next((i for i in range(1, len(timestamps)) if timestamps[i] < timestamps[i - 1]), None)
    checker.equal("timestamps in file order never go back", backwards, None)
    checker.equal("hrv messages: five intervals each", len(hrv_times), (len(expected["rr_ms"]) + 4) // 5)
    summary["rr_ms"] = rr_from_hrv_times(hrv_times)
    compare(checker, expected, summary)
    return checker.failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--expect-json", required=True)
    arguments = parser.parse_args()
    try:
        import fitdecode  # noqa: F401
        import garmin_fit_sdk  # noqa: F401
    except ImportError as error:
        print(f"fit-check: SKIPPED: a reader cannot be imported: {error}")
        return 2
    with open(arguments.expect_json) as file:
        expected = json.load(file)
    with open(arguments.file, "rb") as file:
        data = file.read()

    failures = 0
    for name, run in (("garmin-fit-sdk", lambda: check_garmin_sdk(data, expected)),
                      ("fitdecode", lambda: check_fitdecode(arguments.file, expected))):
        try:
            failures += run()
        except Exception as error:  # a reader refusing the file is a failure, with its reason
            failures += 1
            print(f"fit-check: FAIL {name}: could not read the file: {type(error).__name__}: {error}")
    print(f"fit-check: {'PASS' if failures == 0 else 'FAIL'} ({failures} failed) "
          f"garmin-fit-sdk {version('garmin-fit-sdk')}, fitdecode {version('fitdecode')}")
    return 0 if failures == 0 else 1


def version(distribution):
    try:
        from importlib.metadata import version as metadata_version
        return metadata_version(distribution)
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
