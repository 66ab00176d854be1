#!/usr/bin/env python3
"""`make bench-relay`: what `--relay` costs and how fast it relays, under hrm-sim.

Rounds of `hrm watch --json` on one simulated strap at 50 notifications/s for 10 s, alternating
without and with `--relay` to 3 consumers that hrm-sim plays (as bluetoothd would pass hrm's
values on to centrals). Each frame carries its sequence number, so every consumer's receipt is
matched to the strap's send (both stamped with CLOCK_MONOTONIC by hrm-sim).

  relay latency   strap's send -> each consumer's receipt (median, p99 over every value)
  CPU             hrm's CPU per notification (all threads), with and without the relay
  watch figures   hrm's own line latency and peak RSS, with and without the relay

The real-BlueZ figure (hrm's receipt -> a consumer's, across two virtual controllers) comes from
the lab check (Tests/Fidelity/lab-check.sh prints it).
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Watch"))
import watch_bench  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hrm", default=".build/release/hrm")
    parser.add_argument("--sim", default=".build/release/hrm-sim")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--consumers", type=int, default=3)
    parser.add_argument("--rate", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    plain, relayed = [], []
    for n in range(args.pairs):
        # Both orders, so that neither always runs on a warmer machine.
        for relay in ((0, args.consumers) if n % 2 == 0 else (args.consumers, 0)):
            watch_bench.RELAY = relay
            print(f"pair {n + 1}, {'--relay to %d consumers' % relay if relay else 'no relay'}:", flush=True)
            (relayed if relay else plain).extend(
                watch_bench.streaming(args.hrm, args.sim, 1, args.rate, args.seconds))

    def median(rows, key):
        return statistics.median(r[key] for r in rows)

    print(f"\nmedians over {args.pairs} pairs, {args.rate} notifications/s:")
    print(f"  {'':34} {'no relay':>10} {'--relay':>10} {'ratio':>7}")
    for name, key in (("CPU per notification (us)", "cpu_us"), ("line latency median (ms)", "median_ms"),
                      ("line latency p99 (ms)", "p99_ms"), ("peak RSS (MiB)", "rss_mib")):
        a, b = median(plain, key), median(relayed, key)
        print(f"  {name:34} {a:10.3f} {b:10.3f} {b / a:7.2f}")
    print(f"  {'relay: strap to consumer median (ms)':34} {'':10} {median(relayed, 'relay_median_ms'):10.3f}")
    print(f"  {'relay: strap to consumer p99 (ms)':34} {'':10} {median(relayed, 'relay_p99_ms'):10.3f}")
    print(f"  relayed values: {sum(r['relayed'] for r in relayed)} to "
          f"{min(r['consumers'] for r in relayed)} consumers a round")
    lost = sum(r["lost"] + r["duplicates"] for r in plain + relayed)
    print(f"  lost or duplicated lines: {lost}")
    return 1 if lost or any(r["consumers"] < args.consumers for r in relayed) else 0


if __name__ == "__main__":
    sys.exit(main())
