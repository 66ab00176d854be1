#!/usr/bin/env python3
"""Real recordings that Python packages ship, through `hrm hrv` and neurokit2's Kubios (issue #22).

Usage: real_rr.py HRM_BINARY [--baseline OTHER_HRM] [--write DIR]

Not run by `make test` (it needs three more packages, whose data only this reads). In the HRV venv:

    .build/hrv-venv/bin/pip install --no-deps systole==0.3.1 pyhrv==0.5.0 heartpy==1.2.7
    .build/hrv-venv/bin/python Tests/HRVCheck/real_rr.py .build/debug/hrm

The recordings (found in the installed packages, none imported: only their data files are read):
  pyhrv-short, pyhrv-long  pyhrv 0.5.0 (BSD-3-Clause), files/SampleNNISeriesShort.npy and
                           SampleNNISeriesLong.npy: RR series in whole milliseconds.
  pyhrv-ecg                pyhrv's files/SampleECG.txt, a BITalino ECG at 1000 Hz; R peaks by
                           neurokit2's ecg_peaks.
  systole-rr               systole 0.3.1 (GPL-3.0), datasets/rr.txt: RR intervals in ms (from a
                           PPG at 75 Hz, by their thirds of a sample).
  systole-ecg              systole's datasets/Task1_ECG.npy, an ECG at 1000 Hz (25 min); R peaks by
                           ecg_peaks.
  systole-ppg              systole's datasets/ppg.npy, a PPG at 75 Hz; pulse peaks by neurokit2's
                           ppg_findpeaks.
  heartpy-ppg              heartpy 1.2.7 (MIT), data/data2.csv: a PPG with its timer (about
                           117 Hz); pulse peaks by ppg_findpeaks, the longest run between RRs
                           over 3 s (where the detector lost the pulse).

For each: RR count; hrm's RMSSD, SDNN and artefacts, and the RR indexes `--explain` lists by
kind; the same with --no-correction; with --baseline, another hrm's (e.g. one whose `hrm hrv`
runs the live corrector) for comparison; neurokit2 Kubios: the RR intervals its first pass touches
(as hrv_check.py counts them) and RMSSD and SDNN over its corrected peaks (iterating, as by
default). --write DIR saves each series as DIR/NAME.rr (one RR a line, in ms).
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{name} is not installed (pip install --no-deps {name})")
    return list(spec.submodule_search_locations)[0]


def rr_from_peaks(samples, rate):
    return [float(value) for value in np.diff(np.asarray(samples, dtype=float)) * 1000 / rate]


def longest_run(rr, limit=3000.0):
    """The longest stretch without an RR above `limit` ms (where the peak detector lost the
    signal), and how many such gaps there were."""
    runs, current = [], []
    for value in rr:
        if value > limit:
            runs.append(current)
            current = []
        else:
            current.append(value)
    runs.append(current)
    return max(runs, key=len), len(runs) - 1


def recordings(nk):
    """(name, RR ms, where from) for each recording."""
    import pandas as pd

    pyhrv = os.path.join(package_dir("pyhrv"), "files")
    systole = os.path.join(package_dir("systole"), "datasets")
    heartpy = os.path.join(package_dir("heartpy"), "data")
    found = []
    for name, file in (("pyhrv-short", "SampleNNISeriesShort.npy"), ("pyhrv-long", "SampleNNISeriesLong.npy")):
        found.append((name, [float(v) for v in np.load(os.path.join(pyhrv, file))], f"pyhrv files/{file}"))
    ecg = np.loadtxt(os.path.join(pyhrv, "SampleECG.txt"))[:, -1]
    _, info = nk.ecg_peaks(ecg, sampling_rate=1000)
    found.append(("pyhrv-ecg", rr_from_peaks(info["ECG_R_Peaks"], 1000), "pyhrv files/SampleECG.txt, ecg_peaks"))
    rr = pd.read_csv(os.path.join(systole, "rr.txt"))["rr"].tolist()
    found.append(("systole-rr", [float(v) for v in rr], "systole datasets/rr.txt"))
    ecg = np.load(os.path.join(systole, "Task1_ECG.npy"))
    _, info = nk.ecg_peaks(ecg, sampling_rate=1000)
    found.append(("systole-ecg", rr_from_peaks(info["ECG_R_Peaks"], 1000), "systole datasets/Task1_ECG.npy, ecg_peaks"))
    ppg = np.load(os.path.join(systole, "ppg.npy")).astype(float)
    peaks = nk.ppg_findpeaks(nk.ppg_clean(ppg, sampling_rate=75), sampling_rate=75)["PPG_Peaks"]
    found.append(("systole-ppg", rr_from_peaks(peaks, 75), "systole datasets/ppg.npy, ppg_findpeaks"))
    table = pd.read_csv(os.path.join(heartpy, "data2.csv"))
    rate = 1000 / np.mean(np.diff(table["timer"].to_numpy()))
    signal = table["hr"].to_numpy(dtype=float)
    peaks = nk.ppg_findpeaks(nk.ppg_clean(signal, sampling_rate=rate), sampling_rate=rate)["PPG_Peaks"]
    rr, gaps = longest_run(rr_from_peaks(peaks, rate))
    found.append(("heartpy-ppg", rr, f"heartpy data/data2.csv at {rate:.1f} Hz, ppg_findpeaks; the longest run "
                  f"between {gaps} gaps over 3 s where the detector lost the pulse"))
    return found


def run_hrm(binary, rr, *options):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("".join(f"{value!r}\n" for value in rr))
        path = handle.name
    try:
        result = subprocess.run([binary, "hrv", "--json", *options, path], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(path)
    if result.returncode != 0:
        raise RuntimeError(f"hrm hrv exited {result.returncode}: {result.stderr!r}")
    return json.loads(result.stdout)


def kubios(nk, rr):
    """neurokit2's first-pass touched RRs, and RMSSD, SDNN over its corrected peaks (iterating).
    Peaks at 1024 Hz from the RRs rounded to whole ticks, as hrv_check.py does."""
    import hrv_check

    ticks = [int(round(value * 1024 / 1000)) for value in rr]
    peaks = hrv_check.peaks_of(ticks)
    _, corrected = nk.signal_fixpeaks(peaks, sampling_rate=1024, method="Kubios")
    nn = np.diff(corrected) * 1000 / 1024
    _, touched = hrv_check.kubios_flags(nk, rr)
    return sorted(touched), float(np.sqrt(np.mean(np.diff(nn) ** 2))), float(np.std(nn, ddof=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hrm")
    parser.add_argument("--baseline", help="another hrm binary, shown beside")
    parser.add_argument("--write", metavar="DIR")
    arguments = parser.parse_args()
    import neurokit2 as nk

    print("| recording | RRs | uncorrected RMSSD, SDNN | hrm: artefacts (RRs changed), RMSSD, SDNN "
          + ("| baseline: artefacts (RRs), RMSSD, SDNN " if arguments.baseline else "")
          + "| neurokit2 Kubios: RRs touched, RMSSD, SDNN | both flag |")
    print("| --- " * (6 if arguments.baseline else 5) + "|")
    details = []
    for name, rr, source in recordings(nk):
        if arguments.write:
            os.makedirs(arguments.write, exist_ok=True)
            with open(os.path.join(arguments.write, f"{name}.rr"), "w") as handle:
                handle.write(f"# {name}: {source}\n" + "".join(f"{value!r}\n" for value in rr))
        raw = run_hrm(arguments.hrm, rr, "--no-correction")
        line = run_hrm(arguments.hrm, rr, "--explain")
        changed = sorted(index for indexes in line["artefacts_at"].values() for index in indexes)
        touched, nk_rmssd, nk_sdnn = kubios(nk, rr)
        cells = [f"{name} | {len(rr)} | {raw['rmssd_ms']:.1f}, {raw['sdnn_ms']:.1f} ms",
                 f"{line['artefacts']} ({len(changed)}), {line['rmssd_ms']:.1f}, {line['sdnn_ms']:.1f} ms"]
        if arguments.baseline:
            base = run_hrm(arguments.baseline, rr, "--explain")
            base_changed = sorted(index for indexes in base["artefacts_at"].values() for index in indexes)
            cells.append(f"{base['artefacts']} ({len(base_changed)}), {base['rmssd_ms']:.1f}, {base['sdnn_ms']:.1f} ms")
        both = sorted(set(changed) & set(touched))
        cells.append(f"{len(touched)}, {nk_rmssd:.1f}, {nk_sdnn:.1f} ms")
        cells.append(f"{len(both)}")
        print("| " + " | ".join(cells) + " |")
        details.append((name, source, line["artefacts_at"], touched))
    for name, source, at, touched in details:
        kinds = "; ".join(f"{kind} {indexes}" for kind, indexes in at.items() if indexes) or "none"
        print(f"\n{name} ({source}):\n  hrm artefacts_at: {kinds}\n  neurokit2 touches: {touched}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
