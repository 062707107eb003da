#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer and ASan+UBSan
# (-fsanitize=fuzzer,address,undefined) in build-fuzz/, and runs each for
# SECONDS (default 60) from its committed seed corpus. New inputs go to a
# scratch copy of the corpus, not to the repository; a crashing input is
# kept in fuzz-findings/ and the script exits 1.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET ...]     (TARGET: e.g. api_request_fuzzer; none: all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
bash scripts/setup.sh

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzzer.cc; do targets+=("$(basename "$f" .cc)"); done
fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPOOL_LIBFUZZER=ON \
  -DSPOOL_BUILD_FUZZ=ON -DSPOOL_BUILD_TESTS=OFF -DSPOOL_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]}"

mkdir -p fuzz-findings
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
printf '%-28s %12s %10s %10s %s\n' target execs execs/s corpus result
for t in "${targets[@]}"; do
  corpus="fuzz/corpus/${t%_fuzzer}"
  mkdir -p "$scratch/$t"
  cp -r "$corpus/." "$scratch/$t/" 2>/dev/null || true
  dict=()
  [ -f "fuzz/${t%_fuzzer}.dict" ] && dict=(-dict="fuzz/${t%_fuzzer}.dict")
  set +e
  "build-fuzz/fuzz/$t" "$scratch/$t" "${dict[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="fuzz-findings/$t-" >"$scratch/$t.log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$scratch/$t.log")
  size=$(find "$scratch/$t" -type f | wc -l)
  result=ok
  if [ "$rc" -ne 0 ]; then
    result="FAILED (exit $rc; input in fuzz-findings/, log below)"
    failed=1
  fi
  printf '%-28s %12s %10s %10s %s\n' "$t" "${execs:-?}" "${rate:-?}" "$size" "$result"
  [ "$rc" -eq 0 ] || tail -40 "$scratch/$t.log"
done
exit $failed
