#!/usr/bin/env bash
# Quick start, command 2: install what is needed, build, run every test.
# Exits non-zero when anything fails. Runs:
#   1. the Release build's full CTest suite (unit, crash enumeration,
#      random crash campaign, fuzz corpus replay, CLI end-to-end, install
#      consumer, benchmark smoke run);
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build's unit and
#      crash tests (TESTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== Release build"
SPOOL_BUILD_DIR=build bash scripts/build.sh -DSPOOL_BUILD_TESTS=ON -DSPOOL_BUILD_BENCH=ON -DSPOOL_BUILD_FUZZ=ON -DSPOOL_SANITIZE=OFF
echo "== Release tests"
(cd build && ctest --output-on-failure -j2 --timeout 900)

if [ "${SPOOL_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== ASan+UBSan build"
  SPOOL_BUILD_DIR=build-asan bash scripts/build.sh -DSPOOL_SANITIZE=ON -DSPOOL_BUILD_BENCH=OFF -DSPOOL_BUILD_FUZZ=OFF
  echo "== ASan+UBSan unit and crash tests"
  # The campaign runs 1,000 cycles here (3,000 in the Release run above).
  (cd build-asan && SPOOL_CAMPAIGN_CYCLES=1000 SPOOL_STORE_CAMPAIGN_CYCLES=1000 SPOOL_PIPELINE_CAMPAIGN_CYCLES=1000 SPOOL_REWIND_CAMPAIGN_CYCLES=500 ctest --output-on-failure -j2 --timeout 900 -L 'unit|crash')
fi
