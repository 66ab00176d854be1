#!/usr/bin/env bash
# lintian over the .deb `make deb` built: no errors and no warnings. The info-level tags left
# (hardening-no-bindnow, hardening-no-fortify-functions: SwiftPM links without -z now and Swift
# has no _FORTIFY_SOURCE; spelling-error-in-binary: strings of the statically linked Swift
# runtime and ICU) are not ours to fix and are not failures.
set -euo pipefail
cd "$(dirname "$0")/../.."

deb=${1:-$(ls -t .build/deb/hrm_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -1)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "deb-lintian-check: FAILED: no .deb: run make deb first" >&2; exit 1; }
if ! command -v lintian >/dev/null; then
    echo "deb-lintian-check: SKIPPED: lintian is not installed"
    exit 0
fi
# lintian warns when run as root (as CI is); that line is not about the package.
if ! report=$(lintian --fail-on error,warning --pedantic "$deb" 2>&1); then
    echo "deb-lintian-check: FAILED: $(basename "$deb"):" >&2
    grep -v 'running with root privileges' <<<"$report" >&2
    exit 1
fi
echo "deb-lintian-check: $(basename "$deb"): no errors, warnings or pedantic tags"
