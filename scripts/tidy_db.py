#!/usr/bin/env python3
"""Writes a compile_commands.json for clang-tidy that names each source file.

Usage: tidy_db.py BUILD_DIR OUT_DIR

A unity build's compile_commands.json lists the batches CMake generates
(Unity/unity_N_cxx.cxx), not the .cc files they include, so clang-tidy
would find no entry for a source. This writes OUT_DIR/compile_commands.json
with one entry per source: its own entry where the build has one, else its
batch's command with the batch's path replaced by the source's (the same
flags and include paths, the generated headers of BUILD_DIR included).
"""
import json
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^#include "(.+)"$', re.M)


def main() -> int:
    build, out = Path(sys.argv[1]), Path(sys.argv[2])
    entries = json.loads((build / "compile_commands.json").read_text())
    result = []
    for entry in entries:
        path = Path(entry["file"])
        if "Unity" not in path.parts:
            result.append(entry)
            continue
        for source in INCLUDE.findall(path.read_text()):
            result.append(dict(entry, file=source, command=entry["command"].replace(str(path), source)))
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_commands.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
