#!/usr/bin/env python3
"""hrm's streaming R-peak detector (Sources/ECG) against neurokit2, an independent reader.

Two steps, with the detector run by the Swift test in between (Tests/ECGTests/ECGIndependentTests.swift):

  ecg_check.py simulate DIR   ECGs from nk.ecg_simulate at 130 Hz (the Polar H10's rate) for
                              several heart rates, each clean and with noise added by
                              nk.signal_distort; writes DIR/cases.json and DIR/CASE.uv (one
                              microvolt value a line), with neurokit2's peaks:
                              nk.ecg_peaks(nk.ecg_clean(ecg)) on the noisy ECG ("nk") and on the
                              clean one ("truth": the beats the simulation put there).
  ecg_check.py compare DIR    reads DIR/CASE.ours (the detector's peak sample indices, one a line)
                              and compares: the share of neurokit2's peaks the detector found within
                              1 and 2 samples, its peaks neurokit2 did not find, and both against
                              the truth. Prints a table and PASS or FAIL; exits 0 when all passed.

The acceptance rule: at low noise (0.05 mV and less) the detector finds at least 99 % of
neurokit2's peaks within 2 samples and adds at most 1 % of its own; at higher noise the figures are
printed, and the detector must find at least 90 % of the true beats within 2 samples with at most
10 % extra, like neurokit2 itself. The first and last second are left out (both methods pad
there). Exit 2 when neurokit2 cannot be imported.
"""

import json
import sys
from pathlib import Path

RATE = 130
DURATION = 120
HEART_RATES = [48, 62, 75, 95, 120, 150]
NOISE = [0.0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.5]
LOW_NOISE = 0.05


def simulate(directory):
    import numpy as np
    import neurokit2 as nk

    cases = []
    for index, heart_rate in enumerate(HEART_RATES):
        seed = 240 + index
        clean = nk.ecg_simulate(
            duration=DURATION, sampling_rate=RATE, heart_rate=heart_rate, heart_rate_std=3, noise=0,
            random_state=seed)
        truth = peaks(nk, clean)
        for level in NOISE:
            if level == 0:
                ecg = clean
            else:
                ecg = nk.signal_distort(
                    clean, sampling_rate=RATE, noise_amplitude=level, noise_frequency=[5, 10, 50],
                    noise_shape="laplace", random_state=seed * 7 + int(level * 1000), silent=True)
            name = f"hr{heart_rate}-noise{level:g}"
            microvolts = np.rint(np.asarray(ecg) * 1000).astype(int)
            (directory / f"{name}.uv").write_text("\n".join(str(v) for v in microvolts) + "\n")
            cases.append({
                "name": name, "heart_rate": heart_rate, "noise_mv": level, "samples": len(microvolts),
                "nk": peaks(nk, microvolts / 1000.0), "truth": truth,
            })
    (directory / "cases.json").write_text(json.dumps(cases))
    print(f"ecg-check: simulated {len(cases)} ECGs of {DURATION} s at {RATE} Hz")


def peaks(nk, ecg):
    cleaned = nk.ecg_clean(ecg, sampling_rate=RATE, method="neurokit")
    _, info = nk.ecg_peaks(cleaned, sampling_rate=RATE, method="neurokit")
    return [int(p) for p in info["ECG_R_Peaks"]]


def match(reference, found, tolerance):
    """How many of `reference` have a peak of `found` within `tolerance` samples (each used once)."""
    found = sorted(found)
    used = set()
    hits = 0
    j = 0
    for r in sorted(reference):
        while j < len(found) and found[j] < r - tolerance:
            j += 1
        k = j
        while k < len(found) and found[k] <= r + tolerance:
            if k not in used:
                used.add(k)
                hits += 1
                break
            k += 1
    return hits


def compare(directory):
    cases = json.loads((directory / "cases.json").read_text())
    failures = 0
    print(f"{'case':<20} {'nk':>5} {'ours':>5} {'of nk ±1':>9} {'±2':>7} {'extra':>6}"
          f" | {'truth':>5} {'ours ±2':>8} {'extra':>6} {'nk ±2':>7} {'extra':>6}")
    for case in cases:
        lo, hi = RATE, case["samples"] - RATE
        inside = lambda xs: [x for x in xs if lo <= x < hi]
        nk_peaks, truth = inside(case["nk"]), inside(case["truth"])
        ours = inside(int(line) for line in (directory / f"{case['name']}.ours").read_text().split())
        of_nk_1 = match(nk_peaks, ours, 1) / max(1, len(nk_peaks))
        of_nk_2 = match(nk_peaks, ours, 2) / max(1, len(nk_peaks))
        extra = (len(ours) - match(nk_peaks, ours, 2)) / max(1, len(nk_peaks))
        of_truth = match(truth, ours, 2) / max(1, len(truth))
        extra_truth = (len(ours) - match(truth, ours, 2)) / max(1, len(truth))
        nk_truth = match(truth, nk_peaks, 2) / max(1, len(truth))
        nk_extra = (len(nk_peaks) - match(truth, nk_peaks, 2)) / max(1, len(truth))
        print(f"{case['name']:<20} {len(nk_peaks):>5} {len(ours):>5} {of_nk_1:>9.1%} {of_nk_2:>7.1%} {extra:>6.1%}"
              f" | {len(truth):>5} {of_truth:>8.1%} {extra_truth:>6.1%} {nk_truth:>7.1%} {nk_extra:>6.1%}")
        if case["noise_mv"] <= LOW_NOISE:
            ok = of_nk_2 >= 0.99 and extra <= 0.01
            rule = "≥ 99 % of neurokit2's peaks within 2 samples, ≤ 1 % extra"
        else:
            ok = of_truth >= 0.90 and extra_truth <= 0.10
            rule = "≥ 90 % of the true beats within 2 samples, ≤ 10 % extra"
        if not ok:
            failures += 1
            print(f"ecg-check: FAIL {case['name']}: {rule}")
    if failures:
        print(f"ecg-check: FAIL ({failures} of {len(cases)} cases)")
        return 1
    print(f"ecg-check: PASS ({len(cases)} cases)")
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("simulate", "compare"):
        print(__doc__)
        return 64
    directory = Path(sys.argv[2])
    if sys.argv[1] == "simulate":
        try:
            import neurokit2  # noqa: F401
        except ImportError as error:
            print(f"ecg-check: SKIPPED neurokit2 cannot be imported: {error}")
            return 2
        simulate(directory)
        return 0
    return compare(directory)


if __name__ == "__main__":
    sys.exit(main())
