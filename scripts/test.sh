#!/usr/bin/env bash
# Quick start, command 2: install what is needed, build, run every test.
# Exits non-zero when anything fails. Runs:
#   1. the Release build's full CTest suite (unit, crash enumeration,
#      random crash campaign, fuzz corpus replay, CLI end-to-end, install
#      consumer, benchmark smoke run);
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build (with the
#      whitebox kill points compiled in) and its unit and crash tests, and a
#      blackbox campaign killed at those points (TESTING.md);
#   3. spool-crashfuzz's figures, printed last: the full crash enumeration
#      of every workload, a seeded random campaign of 12,000 cycles and a
#      blackbox campaign (the README records them; they must not shrink).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== Release build"
SPOOL_BUILD_DIR=build bash scripts/build.sh -DSPOOL_BUILD_TESTS=ON -DSPOOL_BUILD_BENCH=ON -DSPOOL_BUILD_FUZZ=ON -DSPOOL_SANITIZE=OFF
echo "== Release tests"
# The crash campaigns run 1,000 cycles each here: spool-crashfuzz's campaign
# below runs 3,000 per family.
(cd build && SPOOL_CAMPAIGN_CYCLES=1000 SPOOL_STORE_CAMPAIGN_CYCLES=1000 SPOOL_PIPELINE_CAMPAIGN_CYCLES=1000 \
  SPOOL_REWIND_CAMPAIGN_CYCLES=1000 ctest --output-on-failure -j2 --timeout 900)

if [ "${SPOOL_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== ASan+UBSan build"
  SPOOL_BUILD_DIR=build-asan bash scripts/build.sh -DSPOOL_SANITIZE=ON -DSPOOL_KILL_POINTS=ON -DSPOOL_BUILD_BENCH=OFF \
    -DSPOOL_BUILD_FUZZ=OFF
  echo "== ASan+UBSan unit and crash tests"
  # The campaigns run 1,000 cycles here (500 for the rewinds).
  (cd build-asan && SPOOL_CAMPAIGN_CYCLES=1000 SPOOL_STORE_CAMPAIGN_CYCLES=1000 SPOOL_PIPELINE_CAMPAIGN_CYCLES=1000 SPOOL_REWIND_CAMPAIGN_CYCLES=500 ctest --output-on-failure -j2 --timeout 900 -L 'unit|crash')
  echo "== ASan+UBSan blackbox campaign, killed at the kill points"
  build-asan/fuzz/crash/spool-crashfuzz --blackbox --seed 1 --cycles 60 --dir "${TMPDIR:-/tmp}/spool-ci-blackbox-asan"
fi

echo "== Crash figures (spool-crashfuzz, Release)"
crashfuzz=build/fuzz/crash/spool-crashfuzz
scratch=${TMPDIR:-/tmp}/spool-ci-crashfuzz
mkdir -p "$scratch"
status=0
"$crashfuzz" --enumerate --json "$scratch/enumerate.json" >"$scratch/enumerate.txt" || status=1
"$crashfuzz" --random --seed 1 --cycles 3000 --json "$scratch/random.json" >"$scratch/random.txt" || status=1
"$crashfuzz" --blackbox --seed 1 --cycles 200 --dir "$scratch/blackbox" --json "$scratch/blackbox.json" \
  >"$scratch/blackbox.txt" || status=1
echo "-- every crash point x every mode, and crashes in recovery"
cat "$scratch/enumerate.txt"
echo "-- random campaign: 3,000 cycles per family (12,000 in all), seeds 1-3000"
cat "$scratch/random.txt"
echo "-- blackbox campaign: a child process on the real file system killed with SIGKILL"
cat "$scratch/blackbox.txt"
exit $status
