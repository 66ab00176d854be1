#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt already uses for SUITE (default bookworm): the first
# `URIs:` of a deb822 `.sources` stanza, or the URL of a one-line `deb` entry in a `.list` file, whose
# suites include SUITE itself (not SUITE-security or SUITE-updates) with the `main` component.
# Only the files apt reads (sources.list, sources.list.d/*.list and *.sources) are looked at, so a
# disabled file is not taken. Prints nothing and exits 1 when no source fits.
#
# Why: the packaging checks must not name a registry's host; the machine's own apt configuration
# says where its packages come from, and a mirror or proxy set up there is honoured the same way.
#
# APT_SOURCES_DIR (default /etc/apt) lets a test point it at a folder of its own.
set -euo pipefail

suite=${1:-bookworm}
dir=${APT_SOURCES_DIR:-/etc/apt}

# deb822: blank-line separated stanzas of `Field: value` lines; comments start with '#'.
from_sources() {
    awk -v suite="$suite" '
        function flush() {
            if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && (" " comps " ") ~ / main / && enabled != "no" && uris != "") {
                split(uris, first, " "); print first[1]; found = 1; exit
            }
            types = ""; suites = ""; comps = ""; uris = ""; enabled = ""
        }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        {
            line = $0; sub(/^[^:]*:[ \t]*/, "", line); key = tolower($0); sub(/:.*/, "", key)
            if (key == "types") types = line
            else if (key == "suites") suites = line
            else if (key == "components") comps = line
            else if (key == "uris") uris = line
            else if (key == "enabled") enabled = tolower(line)
        }
        END { if (!found) flush() }
    ' "$1"
}

# One-line style: deb [options] URL SUITE COMPONENT...
from_list() {
    awk -v suite="$suite" '
        /^[ \t]*deb[ \t]/ {
            n = 2
            if ($2 ~ /^\[/) { while (n <= NF && $n !~ /\]$/) n++; n++ }
            if ($(n + 1) != suite) next
            for (i = n + 2; i <= NF; i++) if ($i == "main") { print $n; exit }
        }
    ' "$1"
}

files=()
[ -f "$dir/sources.list" ] && files+=("$dir/sources.list")
for f in "$dir"/sources.list.d/*.list "$dir"/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
done
for f in "${files[@]}"; do
    case "$f" in
    *.sources) uri=$(from_sources "$f") ;;
    *) uri=$(from_list "$f") ;;
    esac
    if [ -n "$uri" ]; then
        echo "${uri%/}"
        exit 0
    fi
done
exit 1
