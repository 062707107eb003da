#!/usr/bin/env bash
# Checks the source's form (CTest runs both as tests labelled lint):
#   scripts/lint.sh format          every C++ file is as .clang-format lays it out
#   scripts/lint.sh tidy BUILD_DIR  the C++ files of the change pass .clang-tidy's
#                                   checks, with BUILD_DIR's compile_commands.json
# The change is what the commits after $SPOOL_LINT_BASE touch (default: the
# last commit's); where there is no git history, every file. clang-tidy takes
# seconds a file, too long for the whole tree in every CI run; the format
# check takes seconds for all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/lint.sh format | tidy BUILD_DIR}

cxx_files() { git ls-files -- '*.cc' '*.h' 2>/dev/null || find txnlog storage stream rewind tools fuzz bench tests examples -name '*.cc' -o -name '*.h'; }

case "$mode" in
  format)
    files=$(cxx_files)
    if ! echo "$files" | xargs clang-format --dry-run --Werror 2>/tmp/spool-lint-format.$$; then
      grep -E "^[^ ].*(warning|error):" /tmp/spool-lint-format.$$ | cut -d: -f1 | sort | uniq -c |
        awk '{print "lint: " $2 " is not formatted (" $1 " places): clang-format -i " $2}'
      rm -f /tmp/spool-lint-format.$$
      exit 1
    fi
    rm -f /tmp/spool-lint-format.$$
    echo "lint: $(echo "$files" | wc -l) C++ files formatted as .clang-format says"
    ;;
  tidy)
    build=${2:?usage: scripts/lint.sh tidy BUILD_DIR}
    [ -f "$build/compile_commands.json" ] || { echo "lint: no $build/compile_commands.json: configure first" >&2; exit 2; }
    base=${SPOOL_LINT_BASE:-HEAD~1}
    if changed=$(git diff --name-only "$base" -- 2>/dev/null); then
      what="changed since $base"
    else
      changed=$(cxx_files)
      what="all (no history to compare with)"
    fi
    # A unity build's database names its batches, not the sources in them:
    # clang-tidy gets one that names every source (scripts/tidy_db.py).
    db=$(mktemp -d)
    trap 'rm -rf "$db"' EXIT
    python3 scripts/tidy_db.py "$build" "$db"
    # The sources of the libraries and tools; a changed header stands for
    # the source file of its name.
    files=$(echo "$changed" | grep -E '^(txnlog|storage|stream|rewind|tools)/' | sed -E 's#include/spool/[a-z]+/##; s#\.h$#.cc#' |
      sort -u | while read -r f; do [ -f "$f" ] && grep -q "\"file\": \"$PWD/$f\"" "$db/compile_commands.json" && echo "$f"; done || true)
    if [ -z "$files" ]; then
      echo "lint: clang-tidy: no library or tool source among the files $what"
      exit 0
    fi
    echo "lint: clang-tidy on $(echo "$files" | wc -l) source files $what"
    echo "$files" | xargs -P 2 -n 4 clang-tidy -p "$db" --quiet --extra-arg=-Wno-unknown-warning-option
    ;;
  *) echo "usage: scripts/lint.sh format | tidy BUILD_DIR" >&2; exit 2 ;;
esac
