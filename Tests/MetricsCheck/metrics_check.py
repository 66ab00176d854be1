#!/usr/bin/env python3
"""`hrm serve`'s /metrics read by independent readers: prometheus_client's parsers (the classic
text format and OpenMetrics) and a real Prometheus (Debian's `prometheus`) that scrapes hrm serve
every second and is then asked for `hrm_heart_rate_bpm` through its HTTP API. Also checks that
every metric the Grafana dashboard (packaging/grafana/hrm.json) queries is one hrm serves.

hrm serve runs under hrm-sim (`basic`: one strap at 1 Hz with RR). Waits are for events (a line
on hrm's stdout, Prometheus answering ready, a query finding the series) with generous deadlines
that only prove "not hung".

Usage: metrics_check.py HRM [--only NAME,...] [--prometheus PATH]
Prints `metrics-check: <name> ok` per check and `metrics-check: PASS`; exits 1 on a failure,
2 when Prometheus is missing (the caller decides whether that is allowed).
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from prometheus_client.openmetrics import parser as openmetrics_parser
from prometheus_client import parser as text_parser

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(ROOT, "packaging", "grafana", "hrm.json")
GAUGES = ["hrm_heart_rate_bpm", "hrm_rr_interval_seconds", "hrm_rmssd_ms", "hrm_dfa_alpha1", "hrm_zone",
          "hrm_battery_percent", "hrm_connected", "hrm_contact"]
COUNTERS = ["hrm_measurements", "hrm_rr_intervals", "hrm_artefacts", "hrm_reconnects", "hrm_malformed",
            "hrm_notifications_dropped"]
FAILURES = []


def fail(check, message):
    FAILURES.append(f"{check}: {message}")
    print(f"metrics-check: FAIL {check}: {message}", flush=True)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"metrics-check: FAIL not hung, but {what} within {timeout} s")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """hrm serve under hrm-sim, its stdout in a file, its port from stderr."""

    def __init__(self, hrm, work, extra=()):
        sim = os.path.join(os.path.dirname(hrm), "hrm-sim")
        self.stdout_path = os.path.join(work, "serve.out")
        self.port = None
        self.stderr = []
        self.child = subprocess.Popen(
            [sim, "--scenario", "basic", "--", hrm, "serve", "--no-config", "--listen", "127.0.0.1:0",
             "--zones", "60,70,80,90,100", *extra],
            stdout=open(self.stdout_path, "wb"), stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        threading.Thread(target=self._stderr, daemon=True).start()
        wait_for(lambda: self.port, 60, "hrm serve said where it listens")

    def _stderr(self):
        for raw in self.child.stderr:
            line = raw.decode(errors="replace")
            self.stderr.append(line)
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
            if match:
                self.port = int(match.group(1))

    def measurements(self):
        out = []
        for line in open(self.stdout_path, "rb").read().split(b"\n"):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == "measurement":
                out.append(event)
        return out

    def lines(self):
        out = []
        for line in open(self.stdout_path, "rb").read().split(b"\n"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def get(self, path, headers=None):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers.get("Content-Type", ""), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Content-Type", ""), error.read().decode()

    def stop(self):
        self.child.send_signal(signal.SIGTERM)
        try:
            return self.child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.child.kill()
            return None


def families_of(text, openmetrics=False):
    parse = openmetrics_parser.text_string_to_metric_families if openmetrics else text_parser.text_string_to_metric_families
    return {family.name: family for family in parse(text)}


def check_scrapes(hrm, work):
    """Both formats parse; every family with its type; values agree with what hrm printed."""
    check = "parse"
    serve = Serve(hrm, work, ["--json"])
    try:
        # An `hrv` event (every 5 s) so that RMSSD is there too.
        wait_for(lambda: any(line.get("type") == "hrv" for line in serve.lines()), 60, "an hrv event came")
        before = serve.measurements()
        status, content_type, text = serve.get("/metrics")
        after = serve.measurements()
        if status != 200 or not content_type.startswith("text/plain; version=0.0.4"):
            return fail(check, f"/metrics: {status} {content_type}")
        families = families_of(text)
        for name in GAUGES:
            if name not in families or families[name].type != "gauge":
                return fail(check, f"{name}: {families.get(name)}")
        for name in COUNTERS:
            if name not in families or families[name].type != "counter":
                return fail(check, f"{name} (counter): {families.get(name)}")
        if "hrm_build_info" not in families and "hrm_build" not in families:
            return fail(check, f"no hrm_build_info: {sorted(families)}")
        device = before[-1]["device"]

        def value(name, sample=None):
            for s in families[name].samples:
                if s.labels.get("device") == device and (sample is None or s.name == sample):
                    return s.value
            return None

        bpm = value("hrm_heart_rate_bpm")
        if bpm not in {m["bpm"] for m in after}:
            return fail(check, f"hrm_heart_rate_bpm {bpm}, printed {[m['bpm'] for m in after]}")
        count = value("hrm_measurements", "hrm_measurements_total")
        if not (len(before) <= count <= len(after)):
            return fail(check, f"hrm_measurements_total {count}, {len(before)} to {len(after)} printed")
        rr = value("hrm_rr_intervals", "hrm_rr_intervals_total")
        if not (sum(len(m["rr_ms"]) for m in before) <= rr <= sum(len(m["rr_ms"]) for m in after)):
            return fail(check, f"hrm_rr_intervals_total {rr}")
        last_rr = value("hrm_rr_interval_seconds")
        if last_rr not in {m["rr_ms"][-1] / 1000 for m in after if m["rr_ms"]}:
            return fail(check, f"hrm_rr_interval_seconds {last_rr}")
        if value("hrm_connected") != 1 or value("hrm_contact") != 1 or value("hrm_zone") is None:
            return fail(check, "hrm_connected, hrm_contact or hrm_zone missing or wrong")
        rmssd = value("hrm_rmssd_ms")
        if rmssd is None or not (0 < rmssd < 1000):
            return fail(check, f"hrm_rmssd_ms {rmssd}")
        names = {s.labels.get("name") for s in families["hrm_heart_rate_bpm"].samples}
        if names != {"Polar H10 7E102030"}:
            return fail(check, f"name labels {names}")
        # OpenMetrics, as Prometheus asks for it first.
        status, content_type, om = serve.get(
            "/metrics", {"Accept": "application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5"})
        if status != 200 or not content_type.startswith("application/openmetrics-text") or not om.endswith("# EOF\n"):
            return fail(check, f"OpenMetrics: {status} {content_type}")
        om_families = families_of(om, openmetrics=True)
        for name in GAUGES + COUNTERS + ["hrm_build"]:
            if name not in om_families:
                return fail(check, f"OpenMetrics: no {name} in {sorted(om_families)}")
        if om_families["hrm_build"].type != "info":
            return fail(check, f"hrm_build is {om_families['hrm_build'].type}, not info")
        # The page's guard: a foreign Host is refused.
        status, _, _ = serve.get("/metrics", {"Host": "attacker.example"})
        if status not in (403, 421):
            return fail(check, f"a foreign Host got {status}")
        print(f"metrics-check: parse ok ({len(families)} families, bpm {bpm}, {count:.0f} measurements)", flush=True)
        dashboard(set(families) | {f + "_total" for f in COUNTERS})
    finally:
        serve.stop()


def dashboard(served):
    """Every metric the Grafana dashboard queries is one hrm serves."""
    check = "dashboard"
    board = json.load(open(DASHBOARD))
    exprs = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "expr" and isinstance(value, str):
                    exprs.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(board)
    if len(exprs) < 5:
        return fail(check, f"only {len(exprs)} queries in the dashboard")
    used = set()
    for expr in exprs:
        used |= set(re.findall(r"\bhrm_[a-z0-9_]+", expr))
    unknown = used - served
    if unknown:
        return fail(check, f"the dashboard queries metrics hrm does not serve: {sorted(unknown)}")
    for wanted in ["hrm_heart_rate_bpm", "hrm_zone", "hrm_rmssd_ms", "hrm_dfa_alpha1", "hrm_battery_percent"]:
        if wanted not in used:
            return fail(check, f"the dashboard has no panel on {wanted}")
    print(f"metrics-check: dashboard ok ({len(exprs)} queries, {len(used)} metrics)", flush=True)


def check_prometheus(hrm, work, prometheus):
    """A real Prometheus scrapes hrm serve every second; asked back, it has the heart rate."""
    check = "prometheus"
    serve = Serve(hrm, work, ["--json"])
    port = free_port()
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: hrm\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{serve.port}']\n")
    child = subprocess.Popen(
        [prometheus, f"--config.file={config}", f"--storage.tsdb.path={os.path.join(work, 'tsdb')}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "wb"),
        stdin=subprocess.DEVNULL)

    def api(path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                return response.read().decode()
        except Exception:
            return None

    try:
        wait_for(lambda: api("/-/ready"), 90, "Prometheus was ready")

        def found():
            body = api("/api/v1/query?query=hrm_heart_rate_bpm")
            if not body:
                return None
            result = json.loads(body)["data"]["result"]
            return result or None

        result = wait_for(found, 90, "Prometheus had scraped hrm_heart_rate_bpm")
        value = float(result[0]["value"][1])
        labels = result[0]["metric"]
        bpms = {m["bpm"] for m in serve.measurements()}
        if value not in bpms:
            return fail(check, f"Prometheus has {value}, hrm printed {sorted(bpms)}")
        if labels.get("job") != "hrm" or labels.get("device") != "D2:4B:7E:10:20:30":
            return fail(check, f"labels {labels}")
        counted = wait_for(lambda: (lambda b: b and json.loads(b)["data"]["result"])(
            api("/api/v1/query?query=hrm_measurements_total")), 60, "hrm_measurements_total was scraped")
        if float(counted[0]["value"][1]) < 1:
            return fail(check, f"hrm_measurements_total {counted}")
        health = json.loads(api("/api/v1/targets"))["data"]["activeTargets"]
        if not health or health[0]["health"] != "up":
            return fail(check, f"the target is not up: {health}")
        print(f"metrics-check: prometheus ok (hrm_heart_rate_bpm {value:.0f} through Prometheus)", flush=True)
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
        serve.stop()


def main():
    hrm = sys.argv[1]
    only = ["parse", "prometheus"]
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1].split(",")
    prometheus = shutil.which("prometheus") or "/usr/bin/prometheus"
    if "--prometheus" in sys.argv:
        prometheus = sys.argv[sys.argv.index("--prometheus") + 1]
    with tempfile.TemporaryDirectory() as work:
        if "parse" in only:
            check_scrapes(hrm, work)
        if "prometheus" in only:
            if not os.access(prometheus, os.X_OK):
                print(f"metrics-check: MISSING prometheus ({prometheus})", flush=True)
                sys.exit(2)
            check_prometheus(hrm, work, prometheus)
    if FAILURES:
        print("metrics-check: FAILED", flush=True)
        sys.exit(1)
    print("metrics-check: PASS", flush=True)


if __name__ == "__main__":
    main()
