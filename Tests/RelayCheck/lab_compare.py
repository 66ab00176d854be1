#!/usr/bin/python3
"""Compares what the lab's consumer received from hrm's relay with what hrm received from the
strap (its recording), and prints markers for Tests/Fidelity/lab-check.sh:

    lab_compare.py RECORDING CONSUMER_JSON

    relay-values N               notifications the consumer received
    relay-in-order yes|no        each is one of the strap's, byte for byte, in the strap's order
    relay-latency-ms MEDIAN MAX  from hrm's receipt (the recording's time) to the consumer's

Both clocks are the guest's wall clock; the recording's time has millisecond precision.
"""
import datetime
import json
import statistics
import sys


def instant(iso):
    return datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def main():
    recording, consumer = sys.argv[1], sys.argv[2]
    strap = []
    with open(recording) as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") == "measurement" and "hex" in record:
                strap.append((instant(record["time"]), record["hex"]))
    with open(consumer) as text:
        received = json.loads(text.read().strip().splitlines()[-1])["values"]
    print("relay-values %d" % len(received))
    # In order: each value the consumer got is a later notification of the strap's than the last.
    latencies = []
    position = 0
    in_order = bool(received)
    for at, value in received:
        # The strap's latest notification of that value received before the consumer's (10 ms of
        # slack for the recording's millisecond times): a strap repeats values.
        match = None
        later = position
        while later < len(strap) and strap[later][0] <= at + 0.01:
            if strap[later][1] == value:
                match = later
            later += 1
        if match is None:
            in_order = False
            break
        latencies.append((at - strap[match][0]) * 1000)
        position = match + 1
    print("relay-in-order %s" % ("yes" if in_order else "no"))
    if latencies:
        print("relay-latency-ms %.1f %.1f" % (statistics.median(latencies), max(latencies)))


if __name__ == "__main__":
    main()
