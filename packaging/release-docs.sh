#!/usr/bin/env bash
# Man pages and shell completions from the release binaries (`make release` runs this), so that
# `make install` and `make deb` only copy them.
#   release-docs.sh BIN_DIR GENERATE_MANUAL OUT_DIR DATE
set -euo pipefail
bin=$1 generate_manual=$2 out=$3 date=$4

rm -rf "$out"
mkdir -p "$out/man1" "$out/completions" "$out/tmp"
for program in hrm hrm-sim hrm-serve; do
    "$generate_manual" "$bin/$program" --date "$date" --output-directory "$out/tmp"
    # One page per program, named for it. mdoc wants .Pp between paragraphs, not the blank lines
    # of the help text. hrm-serve calls itself "hrm serve" (the command it runs for), a name
    # with a space that whatis cannot index: its page is named for the binary.
    upper=$(tr '[:lower:]' '[:upper:]' <<<"$program")
    sed -e 's/^$/.Pp/' \
        -e "s/^\.Nm \"[^\"]* [^\"]*\"\$/.Nm $program/" \
        -e "s/^\.Dt \"[^\"]* [^\"]*\" /.Dt $upper /" \
        "$out"/tmp/*.1 > "$out/man1/$program.1"
    rm "$out"/tmp/*.1
done
rmdir "$out/tmp"

# hrm-serve is not typed (hrm serve is): completions for hrm and hrm-sim. A bash completion is
# sourced, not run: no #! line.
for program in hrm hrm-sim; do
    "$bin/$program" --generate-completion-script bash | sed '1{/^#!/d}' > "$out/completions/$program.bash"
    "$bin/$program" --generate-completion-script zsh > "$out/completions/_$program"
    "$bin/$program" --generate-completion-script fish > "$out/completions/$program.fish"
done
