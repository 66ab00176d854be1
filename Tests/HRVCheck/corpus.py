#!/usr/bin/env python3
"""The HRV corpus: synthetic RR series with their truth, for hrm's artefact corrector (issue #22).

Usage: corpus.py [--write DIR] [--check DIR]

Each series is made by a small, seeded generator (numpy's RandomState, whose streams numpy keeps
fixed): heart rate `bpm = base + 10·sin(2πt/240) + RSA·sin(2πt/breath) + N(0, noise)` at each
beat's time t, RR = 60/bpm rounded to whole 1/1024 s ticks as a strap sends them. Corrupted
series are a clean one with artefacts injected at recorded places. Every tick count is an
integer, so the files (milliseconds, exact decimals of tick × 1000/1024) are identical wherever
they are made.

For each series DIR holds NAME.rr, the RR intervals `hrm hrv` reads (one a line, milliseconds,
after # lines that describe it), and NAME.truth: the clean RR intervals, then one line per
injected artefact, `# artefact KIND INDEX` (INDEX: the RR interval's 0-based place in NAME.rr;
KIND: missed, extra, ectopic). --write makes the files, --check (the default, on the directory
beside this script) says whether the committed files are what the generator makes; exit 1 when
not.
"""

import argparse
import math
import os
import sys

import numpy as np

TICKS_PER_SECOND = 1024


def clean_ticks(count, base, rsa, breath, noise, seed):
    """The issue's formula, beat by beat; t is the time of the beat's start."""
    rng = np.random.RandomState(seed)
    ticks = []
    t = 0.0
    for _ in range(count):
        bpm = base + 10 * math.sin(2 * math.pi * t / 240) + rsa * math.sin(2 * math.pi * t / breath)
        bpm += rng.normal(0, noise)
        tick = int(round(60 / bpm * TICKS_PER_SECOND))
        ticks.append(tick)
        t += tick / TICKS_PER_SECOND
    return ticks


class Series:
    def __init__(self, name, description, clean, rr=None, artefacts=()):
        self.name = name
        self.description = description
        self.clean = clean
        self.rr = rr if rr is not None else list(clean)
        self.artefacts = list(artefacts)  # (kind, index in rr)

    @property
    def corrupted(self):
        return bool(self.artefacts)


class Injector:
    """Builds a corrupted copy of a clean series from the start, so recorded indexes are final."""

    def __init__(self, clean):
        self.clean = clean
        self.rr = []
        self.artefacts = []
        self.position = 0  # next clean beat

    def keep(self, count=1):
        self.rr.extend(self.clean[self.position : self.position + count])
        self.position += count

    def missed(self, run=1):
        """`run` detections missed in a row: run + 1 beats reported as one RR."""
        self.artefacts.append(("missed", len(self.rr)))
        self.rr.append(sum(self.clean[self.position : self.position + run + 1]))
        self.position += run + 1

    def extra(self, fraction):
        """A spurious detection `fraction` of the way through a beat: one RR reported as two."""
        beat = self.clean[self.position]
        first = int(round(beat * fraction))
        self.artefacts.append(("extra", len(self.rr)))
        self.artefacts.append(("extra", len(self.rr) + 1))
        self.rr.extend([first, beat - first])
        self.position += 1

    def ectopic(self, prematurity):
        """A premature beat (`prematurity` of the RR) and its compensatory pause: the pair's total
        is kept."""
        beat, after = self.clean[self.position], self.clean[self.position + 1]
        early = int(round(beat * prematurity))
        self.artefacts.append(("ectopic", len(self.rr)))
        self.artefacts.append(("ectopic", len(self.rr) + 1))
        self.rr.extend([early, after + beat - early])
        self.position += 2

    def rest(self):
        self.keep(len(self.clean) - self.position)


def build():
    series = []

    def clean(name, description, count, base, rsa, breath, noise, seed):
        series.append(Series(name, description, clean_ticks(count, base, rsa, breath, noise, seed)))
        return series[-1].clean

    resting = clean("resting", "resting, 62 bpm, RSA ±4 bpm over 4 s breaths, noise 1.2 bpm", 600, 62, 4, 4.0, 1.2, 2201)
    clean("athlete", "athlete, 50 bpm, RSA ±8 bpm over 5.5 s breaths, noise 1 bpm", 600, 50, 8, 5.5, 1.0, 2202)
    clean("sitter", "noisy sitter, 70 bpm, RSA ±3 bpm over 3.75 s breaths, noise 3 bpm", 600, 70, 3, 3.75, 3.0, 2203)
    clean("slow-breathing", "slow breathing at 6/min, 65 bpm, RSA ±12 bpm over 10 s breaths, noise 1 bpm", 600, 65, 12, 10.0, 1.0, 2204)
    clean("athlete-40", "athlete at 40 bpm, RSA ±6 bpm over 6 s breaths, noise 1 bpm", 600, 40, 6, 6.0, 1.0, 2205)
    clean("exercise", "exercise, 150 bpm, RSA ±0.5 bpm over 2 s breaths, noise 0.8 bpm", 600, 150, 0.5, 2.0, 0.8, 2206)

    # The corrupted series: ten events in the resting series.
    inject = Injector(resting)
    for start, event in ((50, "missed"), (110, "extra"), (170, "ectopic"), (230, "missed"), (290, "ectopic"),
                         (350, "extra"), (410, "missed"), (470, "ectopic"), (520, "extra"), (570, "ectopic")):
        inject.keep(start - inject.position)
        {"missed": lambda: inject.missed(), "extra": lambda: inject.extra(0.45),
         "ectopic": lambda: inject.ectopic(0.65)}[event]()
    inject.rest()
    series.append(Series("resting-10-events", "the resting series with 3 missed, 3 extra and 4 ectopic beats",
                         resting, inject.rr, inject.artefacts))

    # 3 % ectopic beats: an athlete-like heart with premature beats at random places.
    base = clean_ticks(600, 55, 6, 5.0, 1.0, 2207)
    rng = np.random.RandomState(3207)
    inject = Injector(base)
    while inject.position < len(base) - 2:
        if inject.position > 5 and rng.uniform() < 0.03:
            inject.ectopic(rng.uniform(0.6, 0.8))
            inject.keep(1)
        else:
            inject.keep(1)
    inject.rest()
    series.append(Series("ectopic-3pc", "55 bpm, RSA ±6 bpm, with 3 % ectopic beats (premature at 60-80 %)",
                         base, inject.rr, inject.artefacts))

    # A loose strap: bursts of missed beats, one to three in a row, every few beats for a while.
    base = clean_ticks(600, 62, 4, 4.0, 1.2, 2208)
    rng = np.random.RandomState(3208)
    inject = Injector(base)
    for burst_start in (80, 230, 400, 520):
        inject.keep(burst_start - inject.position)
        for _ in range(4):
            inject.missed(run=int(rng.randint(1, 3)))
            inject.keep(int(rng.randint(2, 5)))
    inject.rest()
    series.append(Series("loose-strap", "62 bpm, RSA ±4 bpm, four bursts of missed beats (1-2 in a row, every 2-4 beats)",
                         base, inject.rr, inject.artefacts))

    # A strap that drops its contact: 250 beats of missed and extra detections amid good ones.
    base = clean_ticks(1000, 62, 4, 4.0, 1.2, 2209)
    rng = np.random.RandomState(3209)
    inject = Injector(base)
    inject.keep(400)
    while inject.position < 650:
        draw = rng.uniform()
        if draw < 0.12:
            inject.missed(run=1 if rng.uniform() < 0.8 else 2)
        elif draw < 0.20:
            inject.extra(rng.uniform(0.3, 0.7))
        else:
            inject.keep(1)
    inject.rest()
    series.append(Series("contact-drop", "62 bpm, RSA ±4 bpm, 250 beats where the contact comes and goes (missed and extra beats)",
                         base, inject.rr, inject.artefacts))
    return series


def milliseconds(ticks):
    return [tick * 1000 / TICKS_PER_SECOND for tick in ticks]


def rmssd(ticks):
    return float(np.sqrt(np.mean(np.diff(milliseconds(ticks)) ** 2)))


def render(series):
    """(NAME.rr, NAME.truth) texts."""
    head = f"# {series.name}: {series.description}\n# made by Tests/HRVCheck/corpus.py; truth in {series.name}.truth\n"
    rr = head + "".join(f"{value!r}\n" for value in milliseconds(series.rr))
    truth = (f"# {series.name}: the clean RR intervals ({len(series.clean)}; RMSSD {rmssd(series.clean):.2f} ms), "
             f"then the artefacts injected into {series.name}.rr\n")
    truth += "".join(f"{value!r}\n" for value in milliseconds(series.clean))
    truth += "".join(f"# artefact {kind} {index}\n" for kind, index in series.artefacts)
    return rr, truth


def read_truth(path):
    """The clean milliseconds and the (kind, index) artefacts of a NAME.truth file."""
    clean, artefacts = [], []
    with open(path) as handle:
        for line in handle:
            if line.startswith("# artefact "):
                _, _, kind, index = line.split()
                artefacts.append((kind, int(index)))
            elif line.strip() and not line.startswith("#"):
                clean.append(float(line))
    return clean, artefacts


def read_rr(path):
    with open(path) as handle:
        return [float(line) for line in handle if line.strip() and not line.startswith("#")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    parser.add_argument("--write", metavar="DIR")
    parser.add_argument("--check", metavar="DIR", default=here)
    arguments = parser.parse_args()
    if arguments.write:
        os.makedirs(arguments.write, exist_ok=True)
        for series in build():
            rr, truth = render(series)
            for suffix, text in (("rr", rr), ("truth", truth)):
                with open(os.path.join(arguments.write, f"{series.name}.{suffix}"), "w") as handle:
                    handle.write(text)
        return 0
    differ = []
    for series in build():
        for suffix, text in zip(("rr", "truth"), render(series)):
            path = os.path.join(arguments.check, f"{series.name}.{suffix}")
            try:
                with open(path) as handle:
                    same = handle.read() == text
            except OSError:
                same = False
            if not same:
                differ.append(path)
    for path in differ:
        print(f"corpus: {path} is not what corpus.py makes")
    print("corpus: " + ("FAIL" if differ else "PASS: every file regenerates identically"))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
