#!/usr/bin/env python3
"""Mild ectopic beats amid strong sinus arrhythmia, on seeds outside the corpus (issue #22): `hrm hrv`
against the truth and against neurokit2's Kubios on the same series.

Usage: sweep.py HRM_BINARY [--seeds 300-349] [--table] [--check] [--clean]

Each series is corpus.py's ectopic-3pc setting from another seed: a 55 bpm heart with ±6 bpm of
respiratory sinus arrhythmia over 5 s breaths and 1 bpm of noise, 600 beats in whole 1/1024 s
ticks, with 3 % of its beats premature at 60-80 % of their RR followed by a compensatory pause
(the pair's total kept); clean beats from seed S, the ectopic beats' places and prematurity from
S + 1000. The default seeds, 300-349, are none of the corpus's (2201-2209, 3207-3209).

For each series: hrm's RMSSD (`hrm hrv --json --explain`) against the clean series', and the RR
intervals hrm changes against those injected (precision: changed RRs that were injected; recall:
injected RRs changed); neurokit2's `signal_fixpeaks(method="Kubios")` the same way (its RMSSD from
its corrected peaks, iterating as by default; its flags from one pass, each flagged peak counting
the RRs it touches, as hrv_check.py counts them). Prints one line per seed with --table, then the
medians and the worst. --check exits 1 unless hrm keeps the bounds in BOUNDS (what `make test`
runs, through hrv_check.py); exit 2 when neurokit2 cannot be used. --clean adds 60 clean series
(the corpus's six clean settings from seeds 100-109): RRs changed and the worst RMSSD error.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402

# What hrm must keep on the default seeds (measured: median 0.74 %, worst 3.9 %, precision 0.998,
# recall 0.988 when this was written); a regression past them fails `make test`.
BOUNDS = {"median_error": 1.5, "worst_error": 5.0, "precision": 0.95, "recall": 0.97}
# And on the 60 clean series (measured: 17 RRs changed, worst error 1.54 %; the live corrector 9
# and 1.54 %, neurokit2's Kubios 604 and 8.4 %).
CLEAN_BOUNDS = {"changed": 36, "worst_error": 2.0}


def mild_ectopic(seed):
    """(clean ms, corrupted ms, injected RR indexes) of the sweep's series for `seed`."""
    base = corpus.clean_ticks(600, 55, 6, 5.0, 1.0, seed)
    rng = np.random.RandomState(seed + 1000)
    inject = corpus.Injector(base)
    while inject.position < len(base) - 2:
        if inject.position > 5 and rng.uniform() < 0.03:
            inject.ectopic(rng.uniform(0.6, 0.8))
        inject.keep(1)
    inject.rest()
    return corpus.milliseconds(base), corpus.milliseconds(inject.rr), [index for _, index in inject.artefacts]


def rmssd(values):
    return float(np.sqrt(np.mean(np.diff(values) ** 2)))


def hrm_result(binary, rr):
    """hrm's RMSSD and the RR indexes it changed."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("".join(f"{value!r}\n" for value in rr))
        path = handle.name
    try:
        result = subprocess.run([binary, "hrv", "--json", "--explain", path], capture_output=True, text=True,
                                timeout=60)
    finally:
        os.unlink(path)
    if result.returncode != 0:
        raise RuntimeError(f"hrm hrv exited {result.returncode}: {result.stderr!r}")
    line = json.loads(result.stdout)
    return line["rmssd_ms"], {index for indexes in line["artefacts_at"].values() for index in indexes}


def kubios_result(nk, rr):
    """neurokit2's RMSSD after its correction (iterating) and the RR indexes its first pass touches."""
    import hrv_check

    ticks = [int(round(value * corpus.TICKS_PER_SECOND / 1000)) for value in rr]
    _, corrected = nk.signal_fixpeaks(hrv_check.peaks_of(ticks), sampling_rate=corpus.TICKS_PER_SECOND,
                                      method="Kubios")
    nk_rmssd = rmssd(np.diff(corrected) * 1000 / corpus.TICKS_PER_SECOND)
    _, touched = hrv_check.kubios_flags(nk, rr)
    return nk_rmssd, touched


# The corpus's six clean settings (corpus.py), each from ten seeds outside it.
CLEAN_SETTINGS = [("resting", 62, 4, 4.0, 1.2), ("athlete", 50, 8, 5.5, 1.0), ("sitter", 70, 3, 3.75, 3.0),
                  ("slow-breathing", 65, 12, 10.0, 1.0), ("athlete-40", 40, 6, 6.0, 1.0),
                  ("exercise", 150, 0.5, 2.0, 0.8)]
CLEAN_SEEDS = range(100, 110)


def clean_sweep(binary, nk):
    """Per tool: RRs changed on the 60 clean series, the worst |RMSSD error| in %, and per setting
    the RRs changed."""
    totals = {"hrm": [0, 0.0, {}], "neurokit2": [0, 0.0, {}]}
    for name, base, rsa, breath, noise in CLEAN_SETTINGS:
        for seed in CLEAN_SEEDS:
            rr = corpus.milliseconds(corpus.clean_ticks(600, base, rsa, breath, noise, seed))
            truth = rmssd(rr)
            for tool, (value, flagged) in (("hrm", hrm_result(binary, rr)), ("neurokit2", kubios_result(nk, rr))):
                totals[tool][0] += len(flagged)
                totals[tool][1] = max(totals[tool][1], abs(100 * (value - truth) / truth))
                totals[tool][2][name] = totals[tool][2].get(name, 0) + len(flagged)
    return totals


def seed_range(text):
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def sweep(binary, nk, seeds, table=False):
    """Per tool: (errors in %, true positives, false positives, false negatives)."""
    totals = {"hrm": ([], 0, 0, 0), "neurokit2": ([], 0, 0, 0)}
    if table:
        print("| seed | injected RRs | true RMSSD | hrm RMSSD, error | hrm changed (wrong) | "
              "neurokit2 RMSSD, error | neurokit2 touched (wrong) |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
    for seed in seeds:
        clean, rr, injected = mild_ectopic(seed)
        truth = rmssd(clean)
        places = set(injected)
        row = []
        for tool, (value, flagged) in (("hrm", hrm_result(binary, rr)), ("neurokit2", kubios_result(nk, rr))):
            errors, tp, fp, fn = totals[tool]
            errors.append(100 * (value - truth) / truth)
            totals[tool] = (errors, tp + len(flagged & places), fp + len(flagged - places), fn + len(places - flagged))
            row.append(f"{value:.2f} ms, {errors[-1]:+.1f} % | {len(flagged)} ({len(flagged - places)})")
        if table:
            print(f"| {seed} | {len(places)} | {truth:.2f} ms | " + " | ".join(row) + " |")
    return totals


def summary(totals):
    figures = {}
    for tool, (errors, tp, fp, fn) in totals.items():
        magnitudes = np.abs(errors)
        figures[tool] = {
            "median_error": float(np.median(magnitudes)),
            "worst_error": float(np.max(magnitudes)),
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0,
        }
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hrm", help="the hrm binary")
    parser.add_argument("--seeds", default="300-349", help="first-last (default 300-349)")
    parser.add_argument("--table", action="store_true", help="one line per seed")
    parser.add_argument("--check", action="store_true", help="exit 1 unless hrm keeps BOUNDS")
    parser.add_argument("--clean", action="store_true",
                        help="also 60 clean series: the corpus's six clean settings from seeds 100-109")
    arguments = parser.parse_args()
    try:
        import neurokit2 as nk
    except Exception as error:
        print(f"sweep: neurokit2 cannot be used: {error!r}")
        return 2
    seeds = seed_range(arguments.seeds)
    figures = summary(sweep(arguments.hrm, nk, seeds, arguments.table))
    print(f"sweep: {len(seeds)} series (seeds {arguments.seeds}), |RMSSD error| median and worst, "
          "precision and recall of the RRs changed against those injected:")
    for tool, values in figures.items():
        print(f"  {tool}: median {values['median_error']:.2f} %, worst {values['worst_error']:.1f} %, "
              f"precision {values['precision']:.3f}, recall {values['recall']:.3f}")
    if arguments.clean:
        for tool, (changed, worst, per) in clean_sweep(arguments.hrm, nk).items():
            print(f"  clean, 60 series (the corpus's six settings, seeds 100-109): {tool} changed {changed} RRs "
                  f"of 36000 ({', '.join(f'{name} {count}' for name, count in per.items())}), "
                  f"worst |RMSSD error| {worst:.2f} %")
    if not arguments.check:
        return 0
    hrm = figures["hrm"]
    failed = [f"{name} {hrm[name]:.3f} (bound {bound})" for name, bound in BOUNDS.items()
              if (hrm[name] > bound if name.endswith("error") else hrm[name] < bound)]
    print("sweep: " + ("FAIL " + "; ".join(failed) if failed else f"PASS within {BOUNDS}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
