#!/usr/bin/env python3
"""Checks that every public function of the installed headers that returns a
Status says which errors it returns.

A function is public when it is declared at namespace level or in the public
part of a class or struct in a header under <module>/include/. Its comment is
the run of // lines just above it, or above the declarations it is grouped
with (no blank line between them); an overload shares the comment of the
first of its name. The comment documents the errors when it has "Errors:",
names a status code (NotFound, Corruption, ...), or says it never fails.
Overrides are documented where the base class declares them, and Status's
own factories are what they name.

Usage: scripts/check_error_docs.py [ROOT]   (exit 1 and a line per function
that does not document its errors)
"""
import pathlib
import re
import sys

CODES = ("NotFound", "Corruption", "InvalidArgument", "IOError", "NoSpace", "Failed", "Busy", "Aborted",
         "NotSupported", "OutOfRange")
DOCUMENTED = re.compile(r"\bErrors?\b|never fails|Never fails|\b(" + "|".join(CODES) + r")\b")
DECLARATION = re.compile(r"^\s*(?:(?:static|virtual|inline|friend|explicit|\[\[nodiscard\]\])\s+)*"
                         r"(?:spool::)?Status\s+(\w+)\s*\(")
ACCESS = re.compile(r"^\s*(public|private|protected)\s*:")
SCOPE_OPEN = re.compile(r"\b(class|struct)\s+(\w+)[^;(]*\{\s*$")


def strip_line_comment(line):
    return line.split("//", 1)[0]


def check(path):
    lines = path.read_text().split("\n")
    problems = []
    scopes = []  # one per open brace: ["namespace" | "class" | "block", is its current access public]
    documented_names = set()
    for i, line in enumerate(lines):
        code = strip_line_comment(line)
        access = ACCESS.match(code)
        if access and scopes and scopes[-1][0] == "class":
            scopes[-1][1] = access.group(1) != "private"
        m = DECLARATION.match(code)
        visible = all(kind != "block" and public for kind, public in scopes)
        in_status = any(kind == "class" for kind, _ in scopes) and path.name == "status.h"
        if m and visible and not in_status:
            name = m.group(1)
            declaration = code
            j = i
            while ";" not in declaration and "{" not in declaration and j + 1 < len(lines):
                j += 1
                declaration += strip_line_comment(lines[j])
            if "override" not in declaration and name not in documented_names:
                if DOCUMENTED.search(comment_above(lines, i)):
                    documented_names.add(name)
                else:
                    problems.append(f"{path}:{i + 1}: {name} returns a Status but its comment names no errors")
        track_braces(code, scopes)
    return problems


def comment_above(lines, i):
    """The // comment above line i, or above the group of declarations it ends."""
    j = i - 1
    while j >= 0 and lines[j].strip() and not lines[j].strip().startswith("//"):
        j -= 1  # another declaration of the group (or a wrapped line of one)
    text = []
    while j >= 0 and lines[j].strip().startswith("//"):
        text.append(lines[j])
        j -= 1
    return "\n".join(reversed(text))


def track_braces(code, scopes):
    opener = SCOPE_OPEN.search(code)
    namespace = re.search(r"\bnamespace\b|extern\s+\"C\"", code) is not None
    for ch in re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', "", code):
        if ch == "{":
            if opener:
                scopes.append(["class", opener.group(1) == "struct"])
                opener = None
            elif namespace:
                scopes.append(["namespace", True])
                namespace = False
            else:
                scopes.append(["block", True])
        elif ch == "}" and scopes:
            scopes.pop()


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    headers = sorted(root.glob("*/include/spool/**/*.h"))
    problems = [p for h in headers for p in check(h)]
    for p in problems:
        print(p)
    print(f"check_error_docs: {len(headers)} installed headers, {len(problems)} Status functions without their errors")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
