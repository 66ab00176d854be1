#!/usr/bin/env bash
# Makes the venv .build/NAME-venv with PACKAGES unless a usable one is there (every one of MODULES
# found), for the tests that check hrm against independent Python readers and for .ci/run.
#
#   Tests/prepare-venv.sh NAME TIMEOUT "MODULE..." PACKAGE...
#
# Test processes (and the tests in each) may run at once: a lock on .build/NAME-venv.lock lets one
# build it while the others wait; a half-built venv (killed mid-install) fails the readiness check
# and is built again. Exit 0 when the venv is ready.
set -u
name=$1 timeout=$2 modules=$3
shift 3
cd "$(dirname "$0")/.."
mkdir -p .build
venv=.build/$name-venv
exec 9>"$venv.lock"
flock 9
ready() {
    [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import importlib.util as u, sys
sys.exit(0 if all(u.find_spec(m) for m in sys.argv[1:]) else 1)' $modules
}
ready && exit 0
rm -rf "$venv"
if ! { /usr/bin/python3 -m venv "$venv" && timeout "$timeout" "$venv/bin/pip" install -q "$@"; }; then
    rm -rf "$venv"
    exit 1
fi
ready
