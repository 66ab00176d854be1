#!/usr/bin/env bash
# What the tests need beyond `make deps`, installed when missing: `make test-deps`, which `make
# test` runs first and `.ci/run` too. The Debian packages with apt-get (through sudo unless root),
# then the venvs of the independent Python readers. Quick when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v dbus-send >/dev/null || need+=(dbus-bin)
# The D-Bus interoperability tests and benchmark use python3-dbus (and GLib for its service side)
# under the system interpreter.
/usr/bin/python3 -c 'import dbus' 2>/dev/null || need+=(python3-dbus)
/usr/bin/python3 -c 'import gi; from gi.repository import GLib' 2>/dev/null || need+=(python3-gi)
# bluetoothctl (BlueZ's own client) checks the simulated BlueZ; it runs without bluetoothd.
command -v bluetoothctl >/dev/null || need+=(bluez)
# bleak, a BLE library written against real BlueZ, must work against hrm-sim unmodified.
/usr/bin/python3 -c 'import bleak' 2>/dev/null || need+=(python3-bleak)
/usr/bin/python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
# xmllint checks hrm's TCX files against Garmin's schema (../shared/specs).
command -v xmllint >/dev/null || need+=(libxml2-utils)
# MQTT's tests and hrm's run a real mosquitto broker and its own clients as witnesses.
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
command -v mosquitto_sub >/dev/null || need+=(mosquitto-clients)
# hrm serve's page is tested in a real browser (ServePageBrowserTests): Debian's chromium, headless.
command -v chromium >/dev/null || need+=(chromium)
# hrm serve's /metrics is scraped by a real Prometheus in the tests.
command -v prometheus >/dev/null || [ -x /usr/bin/prometheus ] || need+=(prometheus)
# The session library's index is read back by SQLite's own shell in the tests.
command -v sqlite3 >/dev/null || need+=(sqlite3)
# The live display is tested on a real pty (script(1)).
command -v script >/dev/null || need+=(bsdutils)
# A narrowed window is tested in a terminal that rewraps its lines (ResizeBinaryTests): tmux.
command -v tmux >/dev/null || need+=(tmux)
if ((${#need[@]})); then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "test-deps: installing ${need[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
else
    echo "test-deps: all packages there"
fi

# The venvs of the independent Python readers, made once here, up front, rather than by the first
# test that needs them (the tests make them with the same script when they are missing): hrm hrv
# against hrv-analysis and neurokit2; hrm serve's WebSocket clients; `--osc`'s messages against python-osc; the FIT encoder's files
# against Garmin's FIT SDK and fitdecode; EDF+ files against pyedflib and MNE (the ECG detector's
# check uses the hrv venv's neurokit2). PyPI out of reach is not fatal here: the tests say SKIPPED
# and why.
Tests/prepare-venv.sh hrv 600 "neurokit2 hrvanalysis" neurokit2 hrv-analysis ||
    echo "hrv-check: SKIPPED the venv for the independent HRV check: neurokit2 and hrv-analysis could not be installed; the tests try again, and say SKIPPED if they cannot"
Tests/prepare-venv.sh serve 300 "websockets.sync.client" websockets ||
    echo "serve-check: SKIPPED the venv for hrm serve's WebSocket clients: websockets could not be installed; the tests try again, and say SKIPPED if they cannot"
Tests/prepare-venv.sh osc 300 "pythonosc" python-osc ||
    echo "osc-check: SKIPPED the venv for the OSC receiver: python-osc could not be installed; the tests try again, and say SKIPPED if they cannot"
Tests/prepare-venv.sh metrics 300 "prometheus_client" prometheus-client ||
    echo "metrics-check: SKIPPED the venv for prometheus_client: it could not be installed; the tests try again, and say SKIPPED if they cannot"
Tests/prepare-venv.sh fit 600 "garmin_fit_sdk fitdecode" garmin-fit-sdk fitdecode ||
    echo "fit-check: SKIPPED the venv for the independent FIT check: garmin-fit-sdk and fitdecode could not be installed; the tests try again, and say SKIPPED if they cannot"
Tests/prepare-venv.sh edf 600 "pyedflib mne" pyedflib mne ||
    echo "edf-check: SKIPPED the venv for the independent EDF+ check: pyedflib and mne could not be installed; the tests try again, and say SKIPPED if they cannot"
