#!/usr/bin/env bash
# Where Spool's time goes in one spool-bench workload: perf records a run of
# the workload on Spool alone (call graphs from DWARF) and prints the
# functions by inclusive share of the samples, then by self share.
# Usage: scripts/profile.sh WORKLOAD [SCALE] [OUT_DIR]
#   e.g. scripts/profile.sh w4; scripts/profile.sh w3 0.5
# Needs perf (Debian: linux-perf) and a Release build with symbols in
# ${SPOOL_BUILD_DIR:-build}; writes OUT_DIR/perf.data (default
# /tmp/spool-profile-WORKLOAD) and OUT_DIR/report.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${1:?usage: scripts/profile.sh WORKLOAD [SCALE] [OUT_DIR]}
scale=${2:-1}
out=${3:-/tmp/spool-profile-$workload}
bench=${SPOOL_BUILD_DIR:-build}/bench/spool-bench
command -v perf >/dev/null || { echo "profile: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$bench" ] || { echo "profile: no $bench: build first (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"
perf record -q -F 999 --call-graph dwarf,16384 -o "$out/perf.data" -- \
  "$bench" --dir "$out/run" --engines spool --workloads "$workload" --reps 1 --scale "$scale" --no-progress \
  >"$out/bench.txt"
{
  echo "# spool-bench --engines spool --workloads $workload --scale $scale: inclusive share (children)"
  perf report -q -i "$out/perf.data" --children --percent-limit 2 --stdio -g none 2>/dev/null | cut -c1-200 |
    head -60
  echo
  echo "# self share"
  perf report -q -i "$out/perf.data" --no-children --percent-limit 1 --stdio -g none 2>/dev/null | cut -c1-200 | head -40
} >"$out/report.txt"
cat "$out/report.txt"
