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
# ccache, when installed (setup.sh installs it), serves objects compiled
# before from any checkout of the tree: paths below it are hashed relative.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# A unity build compiles each target's sources in batches of up to 8 (one
# parse of the shared headers per batch): a cold build takes about half the
# CPU. For many small edits in a row, SPOOL_UNITY_BUILD=OFF recompiles one
# file instead of its batch.
unity=(-DCMAKE_UNITY_BUILD="${SPOOL_UNITY_BUILD:-ON}")
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${unity[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j2 "${targets[@]}"
