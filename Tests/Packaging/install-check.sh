#!/usr/bin/env bash
# `make install` into a temporary PREFIX (no root), then used as an installed hrm is used: from
# another folder with only PREFIX/bin (and the system's) on PATH, so that nothing of the checkout
# is found by accident. Then `make uninstall` must leave no file behind.
# Needs `make release` first (install builds nothing).
set -euo pipefail
cd "$(dirname "$0")/../.."
checkout=$PWD

fail() {
    echo "install-check: FAILED: $*" >&2
    exit 1
}

prefix=$(mktemp -d /tmp/hrm-install-check.XXXXXX)
elsewhere=$(mktemp -d /tmp/hrm-install-elsewhere.XXXXXX)
trap 'rm -rf "$prefix" "$elsewhere"' EXIT

make --no-print-directory install DESTDIR= PREFIX="$prefix" >/dev/null

for program in hrm hrm-sim hrm-serve; do
    [ -x "$prefix/bin/$program" ] || fail "$program not installed"
    # Stripped: no symbol table left.
    readelf -S "$prefix/bin/$program" | grep -q '\.symtab' && fail "$program is not stripped"
done
installed=$(cd "$prefix" && find . -type f | sort)
echo "install-check: installed $(echo "$installed" | wc -l) files, bin $(du -sh "$prefix/bin" | cut -f1)"

# From elsewhere, with PATH holding the installed bin and the system's only. HOME and the XDG
# folders are the test's, so the user's remembered strap and config play no part.
run() {
    (cd "$elsewhere" && env -i PATH="$prefix/bin:/usr/bin:/bin" HOME="$elsewhere" \
        XDG_STATE_HOME="$elsewhere/state" XDG_CONFIG_HOME="$elsewhere/config" \
        XDG_DATA_HOME="$elsewhere/data" TERM=dumb "$@")
}

list=$(run hrm-sim --list) || fail "hrm-sim --list exited $?"
for scenario in basic two-straps drops; do
    grep -q "^$scenario " <<<"$list" || fail "hrm-sim --list lacks $scenario: $list"
done
echo "install-check: hrm-sim --list: $(wc -l <<<"$list") scenarios"

watch=$(run hrm-sim -- hrm watch --count 3 --json) || fail "hrm-sim -- hrm watch --count 3 exited $?"
measurements=$(grep -c '"type":"measurement"' <<<"$watch" || true)
[ "$measurements" = 3 ] || fail "hrm watch --count 3 gave $measurements measurements: $watch"
echo "install-check: hrm-sim -- hrm watch --count 3: 3 measurements"

# hrm serve runs hrm-serve from beside its own binary: its help comes through that path.
serve_help=$(run hrm serve --help) || fail "hrm serve --help exited $?"
grep -q 'USAGE: hrm serve' <<<"$serve_help" || fail "hrm serve --help: $serve_help"

# A page per command (man hrm-watch), each rendering without a warning from the installed files
# only, with its own exit statuses (not the generic ">0 on error") and examples; hrm(1) lists the
# commands; the README and the JSON-lines reference are installed where the pages say.
pages=(hrm hrm-sim hrm-serve)
for command in scan watch record relay sessions trends export reset-energy pair unpair decode hrv team forget config; do
    pages+=("hrm-$command")
done
[ ! -e "$prefix/share/man/man1/hrm-help.1" ] || fail "a page for the help pseudo-command"
if command -v man >/dev/null; then
    for page in "${pages[@]}"; do
        file="$prefix/share/man/man1/$page.1"
        [ -f "$file" ] || fail "$page.1 not installed"
        rendered=$(MANWIDTH=80 man --warnings -l "$file" 2>"$elsewhere/man.err") ||
            fail "man -l $page.1: $(cat "$elsewhere/man.err")"
        [ ! -s "$elsewhere/man.err" ] || fail "man -l $page.1 warns: $(cat "$elsewhere/man.err")"
        for section in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" "SEE ALSO"; do
            grep -q "^$section" <<<"$rendered" || fail "man -l $page.1 has no $section section"
        done
        grep -q '>0 if an error occurs' <<<"$rendered" && fail "$page.1 has the generic exit status"
        [ "$page" = hrm-serve ] || grep -q "^EXAMPLES" <<<"$rendered" || fail "$page.1 has no examples"
        grep -q "$prefix/share/doc/hrm/README.md" <<<"$rendered" || fail "$page.1 does not point at the README"
        grep -q "subcommand" <<<"$rendered" && [ "$page" != hrm ] && fail "$page.1 speaks of a subcommand"
    done
    echo "install-check: ${#pages[@]} man pages render, each with its exit statuses"
else
    fail "man (man-db) is not installed (.ci/run installs it)"
fi
grep -q '^\.It Xr hrm-watch 1$' "$prefix/share/man/man1/hrm.1" || fail "hrm.1 does not list hrm-watch(1)"
for doc in README.md json-lines.md; do
    [ -s "$prefix/share/doc/hrm/$doc" ] || fail "$doc not installed in share/doc/hrm"
done
grep -q '^## JSON lines' "$prefix/share/doc/hrm/json-lines.md" || fail "json-lines.md is not the JSON-lines reference"

# The completions: bash sources its script and completes a subcommand; zsh and fish files exist
# and name their command.
completion=$(bash -c "source '$prefix/share/bash-completion/completions/hrm' &&
    COMP_WORDS=(hrm wa) COMP_CWORD=1 COMP_LINE='hrm wa' COMP_POINT=6 && _hrm && echo \"\${COMPREPLY[*]}\"") ||
    fail "bash cannot source the hrm completion"
grep -qw watch <<<"$completion" || fail "bash completion of 'hrm wa' gave '$completion'"
grep -q '^#compdef hrm$' "$prefix/share/zsh/site-functions/_hrm" || fail "_hrm is not a zsh completion for hrm"
grep -q "^complete -c 'hrm'" "$prefix/share/fish/vendor_completions.d/hrm.fish" || fail "hrm.fish is not a fish completion"
[ -f "$prefix/share/bash-completion/completions/hrm-sim" ] || fail "no hrm-sim completion"
echo "install-check: man pages render; bash completes 'hrm wa' to: $completion"

# The systemd user unit names the installed hrm and passes systemd's own check.
unit="$prefix/lib/systemd/user/hrm-record.service"
grep -q "^ExecStart=$prefix/bin/hrm record" "$unit" || fail "the unit does not run $prefix/bin/hrm"
if command -v systemd-analyze >/dev/null; then
    # A user manager's runtime folder of the check's own; MANPATH so that Documentation=man:hrm-record(1)
    # is found among the installed pages.
    mkdir -m 0700 "$elsewhere/runtime"
    verify=$(XDG_RUNTIME_DIR="$elsewhere/runtime" MANPATH="$prefix/share/man:" \
        systemd-analyze verify --user "$unit" 2>&1) || fail "systemd-analyze verify: $verify"
    [ -z "$verify" ] || fail "systemd-analyze verify: $verify"
    echo "install-check: systemd-analyze verify hrm-record.service: clean"
else
    echo "install-check: SKIPPED systemd-analyze verify: systemd-analyze is not installed"
fi

cd "$checkout"
make --no-print-directory uninstall DESTDIR= PREFIX="$prefix" >/dev/null
left=$(cd "$prefix" && find . -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install-check: make uninstall left no files"
echo "install-check: passed"
