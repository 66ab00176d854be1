#!/usr/bin/env python3
"""An EDF+ file from hrm's EDF writer (Sources/EDF) read by independent readers: pyedflib
(EDFlib's reader, PyPI) and MNE-Python (`mne.io.read_raw_edf`, PyPI), each checked against what
the writer meant.

Usage: edf_check.py FILE --expect-json EXPECTED.json

EXPECTED.json (written by Tests/EDFTests/EDFIndependentTests.swift):
  records      number of data records (of one second)
  start        the first record's start, ISO 8601 with microseconds (local time, as EDF has it)
  equipment    the recording field's equipment subfield as EDFlib gives it ("_" read as " ", "X"
               as empty)
  signals      each signal: label, dimension, rate (samples per second), physical_min/max,
               digital_min/max, transducer, samples (physical values, padded and clipped as the
               writer does)
  annotations  each: onset (seconds after the start), duration (seconds or null), text

pyedflib must find an EDF+C file with those header fields, every sample within one quantisation
step ((physical range) / (digital range)), the annotations, the start to the microsecond and the
equipment (pyedflib's start to the second, its fraction raw: see check_pyedflib). MNE must find the signals (with the same rate: MNE resamples a file whose rates differ,
so each rate is read on its own with `include`), their samples within a step after its unit
scaling (uV: 1e-6), the annotations and the start to the second (MNE drops EDF+'s fraction). Prints PASS or FAIL per reader and check; exits
0 when all passed, 1 when any failed, 2 when a reader cannot be imported.
"""

import argparse
import datetime
import json
import sys
import warnings


class Checker:
    def __init__(self, reader):
        self.reader = reader
        self.failures = 0

    def check(self, what, ok, detail=""):
        if ok:
            print(f"edf-check: PASS {self.reader}: {what}")
        else:
            self.failures += 1
            print(f"edf-check: FAIL {self.reader}: {what}{': ' + detail if detail else ''}")

    def equal(self, what, actual, expected):
        self.check(what, actual == expected, f"read {actual!r}, expected {expected!r}")

    def samples(self, what, actual, expected, step):
        actual = list(actual)
        if len(actual) != len(expected):
            self.check(what, False, f"{len(actual)} samples read, {len(expected)} expected")
            return
        worst, where = 0.0, -1
        for index, (a, e) in enumerate(zip(actual, expected)):
            if abs(a - e) > worst:
                worst, where = abs(a - e), index
        self.check(f"{what} ({len(actual)} samples, worst {worst:.3g} of a step {step:.3g})",
                   worst <= step * 1.0001 + 1e-9,
                   f"sample {where}: read {actual[where] if where >= 0 else None}, expected {expected[where] if where >= 0 else None}")

    def annotations(self, what, actual, expected):
        """actual, expected: lists of (onset s, duration s or None, text)."""
        if len(actual) != len(expected):
            self.check(what, False, f"{len(actual)} read, {len(expected)} expected: first read {actual[:3]}")
            return
        for (ao, ad, at), (eo, ed, et) in zip(sorted(actual), sorted(expected)):
            same_duration = (ed is None and not ad) or (ed is not None and ad is not None and abs(ad - ed) < 1e-6)
            if abs(ao - eo) > 1e-6 or at != et or not same_duration:
                self.check(what, False, f"read {(ao, ad, at)}, expected {(eo, ed, et)}")
                return
        self.check(f"{what} ({len(expected)})", True)


def step(signal):
    return (signal["physical_max"] - signal["physical_min"]) / (signal["digital_max"] - signal["digital_min"])


def expected_annotations(expected):
    return [(a["onset"], a["duration"], a["text"]) for a in expected["annotations"]]


def check_pyedflib(path, expected):
    import pyedflib

    c = Checker("pyedflib")
    start = datetime.datetime.fromisoformat(expected["start"])
    with pyedflib.EdfReader(path) as f:
        c.equal("file type EDF+C", f.filetype, pyedflib.FILETYPE_EDFPLUS)
        c.equal("data records", f.datarecords_in_file, expected["records"])
        c.equal("record duration", f.datarecord_duration, 1)
        # EDFlib keeps the first TAL's fraction of a second in units of 100 ns; pyedflib 0.1.42's
        # getStartdatetime divides it by 100 instead of 10, so the fraction is checked raw.
        c.equal("start (whole seconds)", f.getStartdatetime().replace(microsecond=0), start.replace(microsecond=0))
        c.equal("start's fraction of a second (100 ns)", f.starttime_subsecond, start.microsecond * 10)
        c.equal("equipment", f.getEquipment(), expected["equipment"])
        signals = expected["signals"]
        c.equal("labels", f.getSignalLabels(), [s["label"] for s in signals])
        for i, s in enumerate(signals):
            header = f.getSignalHeader(i)
            c.equal(f"{s['label']}: rate", f.getSampleFrequency(i), s["rate"])
            c.equal(f"{s['label']}: dimension", header["dimension"], s["dimension"])
            c.equal(f"{s['label']}: transducer", header["transducer"], s["transducer"])
            c.equal(f"{s['label']}: physical range", (header["physical_min"], header["physical_max"]),
                    (s["physical_min"], s["physical_max"]))
            c.equal(f"{s['label']}: digital range", (header["digital_min"], header["digital_max"]),
                    (s["digital_min"], s["digital_max"]))
            c.samples(f"{s['label']}: samples", f.readSignal(i), s["samples"], step(s))
        onsets, durations, texts = f.readAnnotations()
        read = [(float(o), (float(d) if d > 0 else None), t) for o, d, t in zip(onsets, durations, texts)]
        c.annotations("annotations", read, expected_annotations(expected))
    return c.failures


UNITS = {"uV": 1e-6, "mV": 1e-3, "V": 1.0}


def check_mne(path, expected):
    import mne

    mne.set_log_level("ERROR")
    c = Checker("mne")
    start = datetime.datetime.fromisoformat(expected["start"]).replace(tzinfo=datetime.timezone.utc)
    signals = expected["signals"]
    rates = sorted({s["rate"] for s in signals})
    for rate in rates:
        chosen = [s for s in signals if s["rate"] == rate]
        labels = [s["label"] for s in chosen]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = mne.io.read_raw_edf(path, include=labels, preload=True, verbose="ERROR")
        c.equal(f"{rate} Hz: channels", raw.ch_names, labels)
        c.equal(f"{rate} Hz: sampling frequency", raw.info["sfreq"], float(rate))
        # MNE reads the start to the second ("this reader currently sets subseconds to 0").
        c.equal(f"{rate} Hz: start (whole seconds)", raw.info["meas_date"], start.replace(microsecond=0))
        data = raw.get_data()
        for row, s in zip(data, chosen):
            scale = UNITS.get(s["dimension"], 1.0)
            c.samples(f"{s['label']}: samples", (v / scale for v in row), s["samples"], step(s))
        read = [(float(o), (float(d) if d > 0 else None), t)
                for o, d, t in zip(raw.annotations.onset, raw.annotations.duration, raw.annotations.description)]
        c.annotations(f"{rate} Hz: annotations", read, expected_annotations(expected))
    return c.failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--expect-json", required=True)
    arguments = parser.parse_args()
    try:
        import pyedflib  # noqa: F401
        import mne  # noqa: F401
    except ImportError as error:
        print(f"edf-check: SKIPPED a reader cannot be imported: {error}")
        return 2
    with open(arguments.expect_json) as stream:
        expected = json.load(stream)
    failures = check_pyedflib(arguments.file, expected) + check_mne(arguments.file, expected)
    if failures:
        print(f"edf-check: FAIL ({failures} checks)")
        return 1
    print("edf-check: PASS (pyedflib, mne)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
