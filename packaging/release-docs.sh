#!/usr/bin/env bash
# Man pages and shell completions from the release binaries (`make release` runs this), so that
# `make install` and `make deb` only copy them.
#   release-docs.sh BIN_DIR GENERATE_MANUAL OUT_DIR DATE
set -euo pipefail
bin=$1 generate_manual=$2 out=$3 date=$4

rm -rf "$out"
mkdir -p "$out/man1" "$out/completions" "$out/doc" "$out/generated"
# A page per hrm command (hrm-watch(1), as git's), and hrm-sim's; hrm-serve's page is `hrm
# serve`'s. man-pages.py adds what generate-manual leaves out (see it). The README's folder is
# @DOCDIR@ until `make install` knows where it goes.
"$generate_manual" "$bin/hrm" --multi-page --date "$date" --output-directory "$out/generated"
"$generate_manual" "$bin/hrm-sim" --date "$date" --output-directory "$out/generated"
python3 packaging/man-pages.py "$out/generated" "$out/man1" @DOCDIR@ packaging/man-examples
rm -rf "$out/generated"

# The README, and its JSON-lines reference on its own (the contract other programs read), for
# PREFIX/share/doc/hrm.
cp README.md "$out/doc/README.md"
awk '/^## JSON lines$/ {on = 1} on && /^## / && !/^## JSON lines$/ {exit} on' README.md > "$out/doc/json-lines.md"
[ -s "$out/doc/json-lines.md" ] || { echo "release-docs: no '## JSON lines' section in README.md" >&2; exit 1; }

# hrm-serve is not typed (hrm serve is): completions for hrm and hrm-sim. A bash completion is
# sourced, not run: no #! line.
for program in hrm hrm-sim; do
    "$bin/$program" --generate-completion-script bash | sed '1{/^#!/d}' > "$out/completions/$program.bash"
    "$bin/$program" --generate-completion-script zsh > "$out/completions/_$program"
    "$bin/$program" --generate-completion-script fish > "$out/completions/$program.fish"
done
