#!/usr/bin/env bash
# Configures and builds Spool (Release) in $SPOOL_BUILD_DIR (default ./build).
# Usage: scripts/build.sh [--target T]... [extra cmake arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${SPOOL_BUILD_DIR:-build}
targets=()
while [ "${1:-}" = "--target" ]; do
  targets+=(--target "$2")
  shift 2
done
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j2 "${targets[@]}"
