#!/usr/bin/env bash
# No package registry's host is named in the repository: the hosts this machine's apt sources name
# (every URI, enabled or not) and PyPI's (from pip itself), looked for in every tracked file. The
# hosts come from the machine, not from a list here, so that this check names none either.
# Also checks apt-mirror.sh, which the chroot check uses instead of naming a mirror, on sources of
# its own.
set -euo pipefail
cd "$(dirname "$0")/../.."

hosts=$(
    {
        cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
            grep -oE '[a-z]+://[^/ ]+' | sed -E 's|^[a-z]+://||; s|.*@||; s|:[0-9]+$||'
        /usr/bin/python3 - 2>/dev/null <<'PY' || true
from pip._internal.models.index import PyPI
print(PyPI.netloc)
print(PyPI.file_storage_domain)
PY
    } | sort -u
)
[ -n "$hosts" ] || { echo "registry-host-check: FAILED: found no registry host on this machine to look for" >&2; exit 1; }
found=0
while read -r host; do
    [ -n "$host" ] || continue
    if hits=$(git grep -n -I -F -i -e "$host" -- . ':!*.pdf'); then
        echo "registry-host-check: FAILED: $host is named in the repository:" >&2
        echo "$hits" >&2
        found=1
    fi
done <<<"$hosts"
((found == 0)) || exit 1
echo "registry-host-check: passed ($(wc -l <<<"$hosts") hosts looked for)"

# apt-mirror.sh on sources of its own.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/sources.list.d"
expect() {
    local want=$1 got
    got=$(APT_SOURCES_DIR=$dir Tests/Packaging/apt-mirror.sh bookworm || true)
    [ "$got" = "$want" ] || { echo "apt-mirror-check: FAILED: got '$got', expected '$want'" >&2; exit 1; }
}
printf '%s\n' 'deb http://a.invalid/debian-security bookworm-security main' '# deb http://x.invalid/ bookworm main' \
    'deb [arch=amd64 signed-by=/k] http://b.invalid/debian/ bookworm contrib main' >"$dir/sources.list"
expect http://b.invalid/debian
rm "$dir/sources.list"
printf '%s\n' 'Types: deb' 'URIs: http://c.invalid/debian' 'Suites: bookworm-updates' 'Components: main' '' \
    'Types: deb-src deb' 'URIs: http://d.invalid/debian http://e.invalid' 'Suites: bookworm bookworm-updates' \
    'Components: main contrib' >"$dir/sources.list.d/one.sources"
printf '%s\n' 'deb http://f.invalid/debian bookworm main' >"$dir/sources.list.d/off.list.disabled"
expect http://d.invalid/debian
rm "$dir/sources.list.d/one.sources"
expect ""
echo "apt-mirror-check: passed"
