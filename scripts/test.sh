#!/usr/bin/env bash
# Quick start, command 2: install what is needed, build, run every test.
# Exits non-zero when anything fails. Runs:
#   1. a Release build of the programs, the crash tests and the benchmarks,
#      and its tests: crash enumeration and random crash campaigns at full
#      length, CLI end-to-end, install consumer, benchmark smoke run;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build at -Og (with
#      the whitebox kill points compiled in) of the test programs: the unit
#      tests, the crash tests (shorter), the fuzz corpora, and a blackbox
#      campaign killed at those points (with SPOOL_SKIP_SANITIZERS=1, the
#      Release build runs the unit tests and fuzz corpora instead);
#   3. a ThreadSanitizer build of the concurrency tests (group commit,
#      async appends, commits queued behind one another, the helper thread,
#      batches prepared ahead while others commit,
#      concurrent producers, continuous updates, a rewind requested while a
#      continuous update runs, the API read from many threads during an
#      update, the HTTP server under load);
#   4. the crash figures, printed last: those of the Release run's crash
#      tests (every workload's enumeration and a random campaign of 3,000
#      cycles per family: 18,000 in all), merged, and a blackbox campaign.
#      The README records them; they must not shrink (README.md, "Crash safety, measured").
set -euo pipefail
cd "$(dirname "$0")/.."
# A stage's heading, with the time this run has taken so far.
stage() { printf '== %s (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
bash scripts/setup.sh

# The unit tests and the fuzz corpora run in the sanitizer build; the
# Release build makes the rest (spool_release_checks), unless the
# sanitizers are skipped: then it makes and runs everything.
release_targets=(--target spool_release_checks)
release_labels=(-L 'crash|e2e|bench|install|lint')
if [ "${SPOOL_SKIP_SANITIZERS:-0}" = "1" ]; then
  release_targets=()
  release_labels=()
fi
stage "Release build"
SPOOL_BUILD_DIR=build bash scripts/build.sh "${release_targets[@]}" -DSPOOL_BUILD_TESTS=ON -DSPOOL_BUILD_BENCH=ON \
  -DSPOOL_BUILD_FUZZ=ON -DSPOOL_SANITIZE=OFF
stage "Release tests: crash (the figures), end-to-end, benchmark smoke, install"
figures=${TMPDIR:-/tmp}/spool-ci-crash-figures
rm -rf "$figures"
(cd build && SPOOL_CRASH_FIGURES_DIR="$figures" ctest --output-on-failure -j2 --timeout 900 "${release_labels[@]}")

if [ "${SPOOL_SKIP_SANITIZERS:-0}" != "1" ]; then
  stage "ASan+UBSan build (the unit and crash test programs, the fuzz targets, spool-crashfuzz)"
  SPOOL_BUILD_DIR=build-asan bash scripts/build.sh --target spool_test_programs -DSPOOL_SANITIZE=ON \
    -DSPOOL_KILL_POINTS=ON -DSPOOL_BUILD_BENCH=OFF -DSPOOL_BUILD_FUZZ=ON
  stage "ASan+UBSan unit and crash tests, fuzz corpora"
  # What the Release run has in full, shorter: each enumeration crashes
  # every point in one mode, the next at each point (SPOOL_CRASH_MODES=rotate);
  # the random campaigns run 1,000 cycles for the log and the store, 300 for
  # the pipeline, 100 per rewind scope, 30 mixed.
  (cd build-asan && SPOOL_CRASH_MODES=rotate SPOOL_CAMPAIGN_CYCLES=1000 SPOOL_STORE_CAMPAIGN_CYCLES=1000 \
    SPOOL_PIPELINE_CAMPAIGN_CYCLES=300 SPOOL_REWIND_CAMPAIGN_CYCLES=100 SPOOL_MIXED_CAMPAIGN_CYCLES=30 \
    ctest --output-on-failure -j2 --timeout 900 -L 'unit|crash')
  stage "ASan+UBSan blackbox campaign, killed at the kill points"
  build-asan/fuzz/crash/spool-crashfuzz --blackbox --seed 1 --cycles 60 --dir "${TMPDIR:-/tmp}/spool-ci-blackbox-asan"
fi

if [ "${SPOOL_SKIP_SANITIZERS:-0}" != "1" ]; then
  stage "ThreadSanitizer build (the concurrency tests)"
  # The test programs' files that hold the concurrency tests, no more
  # (spool_concurrency_tests in cmake/SpoolModule.cmake).
  SPOOL_BUILD_DIR=build-tsan bash scripts/build.sh --target spool_txnlog_concurrency_tests \
    --target spool_storage_concurrency_tests --target spool_topic_tests --target spool_pipeline_tests \
    --target spool_rewind_concurrency_tests --target spool_api_tests --target spool_sql_tests --target spool \
    -DSPOOL_SANITIZE_THREAD=ON -DSPOOL_BUILD_BENCH=OFF -DSPOOL_BUILD_FUZZ=OFF
  stage "ThreadSanitizer concurrency tests"
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
  build-tsan/tests/txnlog/spool_txnlog_concurrency_tests --gtest_filter='*Concurrent*:*GroupCommit*:*Async*:HelperThreadTest.*'
  # Commits queued behind one another, big ones whose history runs a helper
  # makes, the state file's check on several threads, and a read's history
  # runs decompressed on two.
  build-tsan/tests/storage/spool_storage_concurrency_tests \
    --gtest_filter='TableTest.*Queued*:TableTest.BigCommits*:StateCheckTest.OfSeveral*:HistoryRunTest.*'
  build-tsan/tests/stream/spool_topic_tests --gtest_filter='*Concurrent*:TopicGroupTest.*'
  build-tsan/tests/stream/spool_pipeline_tests --gtest_filter='*Continuous*:*WhileProducers*:RunAheadTest.*'
  build-tsan/tests/rewind/spool_rewind_concurrency_tests --gtest_filter='*ContinuousUpdateRuns*:*OneUpdateRunsAtATime*'
  build-tsan/tests/tools/spool_api_tests --gtest_filter='*ManyThreads*:*SecondUpdate*:*AnUpdateStartsAtOnce*:*Continuous*'
  # SQL's reads on threads of their own, handing rows to the statement's thread.
  build-tsan/tests/tools/spool_sql_tests --gtest_filter='SqlTest.*'
  # The HTTP server under load: 400 reads while an update works through 200,000 orders.
  bash tests/tools/serve_test.sh build-tsan/tools/spool
  unset TSAN_OPTIONS
fi

stage "Crash figures"
crashfuzz=build/fuzz/crash/spool-crashfuzz
mkdir -p "$figures"
status=0
"$crashfuzz" --blackbox --seed 1 --cycles 200 --dir "${TMPDIR:-/tmp}/spool-ci-blackbox" \
  --json "$figures/blackbox.json" >"$figures/blackbox.txt" || status=1
echo "-- the Release run's crash tests: every crash point x every mode (and crashes in recovery) of every"
echo "-- workload, and random campaigns of 3,000 cycles per family"
"$crashfuzz" merge $(ls "$figures"/*.json | grep -v blackbox.json) || status=1
echo "-- blackbox campaign: a child process on the real file system killed with SIGKILL"
cat "$figures/blackbox.txt"
stage "done"
exit $status
