#!/usr/bin/env python3
"""The man pages hrm installs, from swift-argument-parser's generate-manual output.

    man-pages.py GENERATED_DIR OUT_DIR DOC_DIR EXAMPLES_DIR

GENERATED_DIR holds generate-manual's pages: `hrm.1` and one `hrm.SUBCOMMAND.1` each
(--multi-page), `hrm-sim.1` and `hrm-serve.1`. What this adds to them:

- a page per subcommand named as git's are (`hrm-watch(1)`, `man hrm-watch`), no `help` page;
- the help text's "Exit status: ..." paragraph as the EXIT STATUS section, instead of the
  generic "0 on success, >0 on error";
- an OPTIONS section for the options (generate-manual lists them in DESCRIPTION);
- EXAMPLES from EXAMPLES_DIR/PAGE.txt (blocks: `# what it does` lines, then the commands);
- "the README" pointing at README.md where `make install` puts it (DOC_DIR), in SEE ALSO too;
- hrm(1) listing every command with its summary; no "subcommand" in the synopsis of hrm-sim(1)
  and hrm-serve(1), which have none;
- `.Pp` between paragraphs (mdoc does not take blank lines).
"""

import pathlib
import re
import sys


def blocks(lines):
    """Splits mdoc lines into (section name, lines) in order; the prologue has name None."""
    sections = [(None, [])]
    for line in lines:
        match = re.match(r'^\.Sh "?([^"]*)"?$', line)
        if match:
            sections.append((match.group(1), []))
        else:
            sections[-1][1].append(line)
    return sections


def render(sections):
    out = []
    for name, lines in sections:
        if name is not None:
            out.append(f'.Sh "{name}"' if " " in name else f".Sh {name}")
        out.extend(lines)
    return out


def paragraphs(lines):
    """mdoc wants .Pp between paragraphs, never a blank line (groff warns)."""
    out = []
    for line in lines:
        if line.strip() == "":
            if out and out[-1] != ".Pp":
                out.append(".Pp")
        else:
            out.append(line)
    while out and out[-1] == ".Pp":
        out.pop()
    return out


def examples(path):
    """EXAMPLES from a text file: blocks separated by blank lines, `# ` lines say what the
    commands under them do."""
    if not path.exists():
        return []
    out = []
    for block in path.read_text().strip().split("\n\n"):
        said = [line[2:] for line in block.splitlines() if line.startswith("# ")]
        commands = [line for line in block.splitlines() if line and not line.startswith("#")]
        if said:
            if out:
                out.append(".Pp")
            out.extend(said)
        if commands:
            out.append(".Bd -literal -offset indent")
            out.extend("$ " + command.replace("\\", "\\e") for command in commands)
            out.append(".Ed")
    return out


def rework(text, page, spoken, doc_dir, examples_dir, see_also):
    lines = text.splitlines()
    sections = blocks(lines)
    result = []
    options = []
    exit_status = None
    for name, body in sections:
        if name is None:
            body = [re.sub(r"^\.Dt \S+ 1$", f".Dt {page.upper()} 1", line) for line in body]
        elif name == "NAME":
            body = [f".Nm {page}" if line.startswith(".Nm") else line for line in body]
        elif name == "SYNOPSIS":
            # No subcommand to give hrm-sim or hrm-serve (generate-manual counts `help`).
            if page in ("hrm-sim", "hrm-serve"):
                body = [line for line in body if line != ".Ar subcommand"]
            body = [".Ar command" if line == ".Ar subcommand" else line for line in body]
            body = [f'.Nm "{spoken}"' if line == ".Nm" else line for line in body]
        elif name == "DESCRIPTION":
            if ".Bl -tag -width 6n" in body:
                start = body.index(".Bl -tag -width 6n")
                body, options = body[:start], body[start:]
            kept = []
            for line in body:
                # Its own paragraph, or the end of one.
                at = line.find("Exit status: ")
                if at < 0:
                    kept.append(line)
                    continue
                exit_status = line[at + len("Exit status: ") :]
                if line[:at].strip():
                    kept.append(line[:at].rstrip())
            body = paragraphs(kept)
            if not body:
                body = []
        elif name == "EXIT STATUS":
            continue
        elif name == "SEE ALSO":
            continue
        result.append((name, body))
    # The help pseudo-subcommand is not an option of hrm-sim or hrm-serve.
    if page in ("hrm-sim", "hrm-serve"):
        trimmed = []
        skipping, depth = False, 0
        for line in options:
            if line.startswith(".It Em help"):
                skipping, depth = True, 0
                continue
            if skipping:
                # The item ends at the next item or the end of the list it is in, not inside
                # the list of its own it holds.
                if line.startswith(".Bl"):
                    depth += 1
                    continue
                if line == ".El" and depth > 0:
                    depth -= 1
                    continue
                if depth > 0 or not (line.startswith(".It") or line == ".El"):
                    continue
                skipping = False
            trimmed.append(line)
        options = trimmed
    if options:
        result.append(("OPTIONS", paragraphs(options)))
    status = [exit_status] if exit_status else [".Ex -std"]
    result.append(("EXIT STATUS", status))
    example = examples(examples_dir / f"{page}.txt")
    if example:
        result.append(("EXAMPLES", example))
    also = [f".Xr {other} 1 ," for other in see_also if other != page]
    also.append(f".Pa {doc_dir}/README.md")
    result.append(("SEE ALSO", also))
    out = "\n".join(render(result)) + "\n"
    # The README is installed: say where. "see the README" and its kind.
    out = out.replace("(see the README for the format)", "(see README.md)")
    out = out.replace("see the README", "see README.md")
    out = out.replace("in the README", "in README.md")
    out = out.replace("the README", "README.md")
    return out


def main():
    generated, out_dir, doc_dir, examples_dir = (pathlib.Path(arg) for arg in sys.argv[1:5])
    out_dir.mkdir(parents=True, exist_ok=True)
    pages = {}
    for path in sorted(generated.glob("*.1")):
        stem = path.name[:-2]
        # `help` is no command of its own; hrm-serve's page is `hrm serve`'s (hrm-serve runs in
        # its place, with the same options), made from the subcommand.
        if stem in ("hrm.help", "hrm serve"):
            continue
        page = stem.replace(".", "-")
        spoken = stem.replace(".", " ") if stem.startswith("hrm.") else stem
        if stem == "hrm-serve":
            spoken = "hrm-serve"
        pages[page] = (path.read_text(), spoken)
    names = sorted(pages)
    summaries = {}
    for page, (text, _) in pages.items():
        match = re.search(r'^\.Nd "?(.*?)"?$', text, re.M)
        summaries[page] = match.group(1) if match else ""
    for page, (text, spoken) in pages.items():
        also = ["hrm"] + [n for n in names if n != "hrm"] if page != "hrm" else [n for n in names if n != "hrm"]
        reworked = rework(text, page, spoken, str(doc_dir), examples_dir, also)
        if page == "hrm":
            # The commands, each with its summary, before the options.
            listing = ["The commands, each with a page of its own:", ".Bl -tag -width 14n"]
            if not reworked.split(".Sh DESCRIPTION\n", 1)[1].startswith(".Sh OPTIONS"):
                listing.insert(0, ".Pp")
            for other in names:
                if other.startswith("hrm-") and other not in ("hrm-sim", "hrm-serve"):
                    listing += [f".It Xr {other} 1", summaries[other]]
            listing.append(".El")
            reworked = reworked.replace(".Sh OPTIONS", "\n".join(listing) + "\n.Sh OPTIONS", 1)
        (out_dir / f"{page}.1").write_text(reworked)


if __name__ == "__main__":
    main()
