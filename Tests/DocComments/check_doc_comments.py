#!/usr/bin/env python3
"""Every public declaration of the library modules has a doc comment (#28 item 8).

Lists each public declaration without one as `path:line: kind name` and ends with
`N of M public declarations documented`; exits 1 when any is missing.

A public declaration is a type, func, init, var/let, subscript, typealias or associatedtype
marked `public` or `open` (at any nesting level), a member of a `public extension` without an
access modifier of its own, a case of a public enum and a requirement of a public protocol.
Extensions themselves need none. A doc comment is `///` lines or a `/** */` block directly above
the declaration; attributes (`@inlinable`, ...) may stand between. Several enum cases on one line
count as one declaration and share one comment; so do declarations on the line of another
(`public struct S { public init() {} }`): only the first is seen.

Usage: check_doc_comments.py [FOLDER ...]   (default: the Sources folders of the library modules)
"""

import os
import re
import sys

MODULES = ["HeartRate", "HRV", "FIT", "DBus", "BlueZ", "MQTT", "Threads", "Monitor", "OSC", "PolarPMD", "ECG", "EDF"]

DECL_KEYWORDS = {
    "func", "init", "var", "let", "subscript", "typealias", "associatedtype",
    "enum", "struct", "class", "protocol", "actor", "extension", "case",
}
TYPE_KEYWORDS = {"enum", "struct", "class", "protocol", "actor", "extension"}
ACCESS = {"public", "open", "internal", "fileprivate", "private", "package"}
OTHER_MODIFIERS = {
    "static", "final", "override", "mutating", "nonmutating", "nonisolated", "convenience",
    "required", "lazy", "weak", "unowned", "indirect", "dynamic", "optional", "consuming",
    "borrowing", "isolated", "distributed",
}


def code_lines(text):
    """The source's lines with comments removed and string literals emptied (`""`), so that
    braces and keywords are seen only in code."""
    out = []
    line = []
    i = 0
    n = len(text)
    # Stack of states: "code" (with the paren depth of an interpolation), "string", "multi",
    # "block" (comment depth).
    stack = [["code", 0]]
    while i < n:
        c = text[i]
        state = stack[-1]
        if c == "\n":
            out.append("".join(line))
            line = []
            i += 1
            continue
        kind = state[0]
        if kind == "block":
            if text.startswith("*/", i):
                stack.pop()
                i += 2
            elif text.startswith("/*", i):
                stack.append(["block", 0])
                i += 2
            else:
                i += 1
            continue
        if kind in ("string", "multi"):
            hashes = state[1]
            close = ('"""' if kind == "multi" else '"') + "#" * hashes
            if c == "\\" and text.startswith("#" * hashes, i + 1):
                j = i + 1 + hashes
                if j < n and text[j] == "(":
                    stack.append(["interp", 0])
                    i = j + 1
                    continue
                i = j + 1
                continue
            if text.startswith(close, i):
                stack.pop()
                line.append('"')
                i += len(close)
                continue
            i += 1
            continue
        # code or interpolation
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            stack.append(["block", 0])
            i += 2
            continue
        m = re.match(r'(#*)("""|")', text[i:i + 64])
        if m and (m.group(1) == "" or c == "#"):
            hashes = len(m.group(1))
            stack.append(["multi" if m.group(2) == '"""' else "string", hashes])
            line.append('"')
            i += len(m.group(0))
            continue
        if kind == "interp":
            if c == "(":
                state[1] += 1
            elif c == ")":
                if state[1] == 0:
                    stack.pop()
                    i += 1
                    continue
                state[1] -= 1
        line.append(c)
        i += 1
    out.append("".join(line))
    return out


def parse_decl(code):
    """(keyword, access, name, type-access-set) of a declaration starting this line, or None."""
    s = code.strip()
    # Attributes, with their arguments.
    while s.startswith("@"):
        m = re.match(r"@[\w.]+", s)
        if not m:
            return None
        s = s[m.end():]
        if s.startswith("("):
            depth = 0
            for k, ch in enumerate(s):
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                    if depth == 0:
                        s = s[k + 1:]
                        break
            else:
                return None
        s = s.strip()
    access = None
    while True:
        m = re.match(r"([A-Za-z_]+)(\((set)\))?\s*", s)
        if not m:
            return None
        word = m.group(1)
        if word in ACCESS:
            if not m.group(2):
                access = word
            s = s[m.end():]
        elif word in OTHER_MODIFIERS:
            s = s[m.end():]
        elif word in DECL_KEYWORDS:
            rest = s[m.end():]
            if word == "class" and re.match(r"(func|var|let|subscript)\b", rest):
                s = rest
                continue
            name = re.match(r"(`?\w+`?|[^\s(]+)?", rest).group(0) if word not in ("init", "subscript") else word
            return word, access, name
        else:
            return None


def has_doc(lines, index):
    """A doc comment directly above line `index`, skipping attribute-only lines."""
    j = index - 1
    while j >= 0:
        s = lines[j].strip()
        if s.startswith("@") and not s.startswith("@_"):
            j -= 1
            continue
        if s.startswith("@_"):
            j -= 1
            continue
        if s.startswith("///"):
            return True
        if s.endswith("*/"):
            k = j
            while k >= 0 and "/*" not in lines[k]:
                k -= 1
            return k >= 0 and lines[k].strip().startswith("/**")
        return False
    return False


def check_file(path):
    """(documented, total, missing) for one file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    raw = text.split("\n")
    code = code_lines(text)
    # Each open brace's context: (kind, is_public) of the type it opens, or ("code", False).
    stack = []
    pending = None
    documented = 0
    total = 0
    missing = []
    for number, line in enumerate(code):
        decl = parse_decl(line)
        top = stack[-1] if stack else ("file", False)
        if decl and top[0] != "code":
            word, access, name = decl
            in_public_ext = top == ("extension", True)
            is_public = access in ("public", "open") or (in_public_ext and access is None)
            counted = False
            if word == "case":
                counted = top == ("enum", True)
            elif word == "extension":
                counted = False
            elif top == ("protocol", True):
                counted = True
            else:
                counted = is_public
            if counted:
                total += 1
                if has_doc(raw, number):
                    documented += 1
                else:
                    missing.append((number + 1, word, name))
            if word in TYPE_KEYWORDS:
                type_public = access in ("public", "open") or (in_public_ext and access is None)
                pending = (word, type_public)
            else:
                pending = ("code", False)
        for ch in line:
            if ch == "{":
                stack.append(pending if pending else ("code", False))
                pending = None
            elif ch == "}":
                if stack:
                    stack.pop()
    return documented, total, missing


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    folders = argv[1:] or [os.path.join("Sources", m) for m in MODULES]
    documented = total = 0
    for folder in folders:
        base = folder if os.path.isabs(folder) else os.path.join(root, folder)
        for dirpath, _, files in sorted(os.walk(base)):
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(dirpath, name)
                d, t, missing = check_file(path)
                documented += d
                total += t
                for line, word, decl_name in missing:
                    print(f"{os.path.relpath(path, root)}:{line}: {word} {decl_name}")
    print(f"{documented} of {total} public declarations documented")
    return 0 if documented == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
