#!/usr/bin/env bash
# Quick start, command 1: install what is needed, build, run Spool's demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh --target spool
./build/tools/spool demo "$@"
