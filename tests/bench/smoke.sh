#!/usr/bin/env bash
# The benchmark smoke run: every workload of spool-bench on every engine at
# --scale 0.05, one repetition (W6's history series at ×2 and ×10, not
# ×10 and ×100, which took 55 s of the run's 109), with --json; then
# charts of that file drawn as PNG and as SVG, and the plot command given
# bad input. Each workload checks what it measured against a model (a
# read, an output table, a recovered log) and exits non-zero on a wrong
# result; this script checks that every workload and every engine left
# results and charts. Nothing about speed is asserted.
# Usage: smoke.sh PATH/TO/spool-bench
set -euo pipefail
bench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

fail() { echo "bench smoke: $*" >&2; exit 1; }

"$bench" --dir "$dir/run" --scale 0.05 --reps 1 --no-progress --w6-history-multipliers 2,10 --json "$dir/results.json" >"$dir/report.txt" \
  2>"$dir/progress.txt" || { tail -20 "$dir/progress.txt" >&2; fail "spool-bench failed"; }

workloads="limits w1 w2 w2-writers w3 w3k w4 w4-keys latency w5 w5-rows w6 w6-history cdf snapshot vacuum history-updates w6p w7 w7-log e2e sql jetstream"
for w in $workloads; do
  grep -q "\"workload\": \"$w\"" "$dir/results.json" || fail "no result of workload $w in the JSON"
done
# jetstream's hand-built rows beside the engines: the bare libnats loop and libnats + RocksDB.
for e in spool rocksdb lmdb sqlite leveldb nats-limit nats-rocksdb; do
  grep -q "\"engine\": \"$e\"" "$dir/results.json" || fail "no result of engine $e in the JSON"
done
for key in '"machine"' '"versions"' '"settings"' '"targets"' '"ratio_to_spool"'; do
  grep -q "$key" "$dir/results.json" || fail "the JSON has no $key"
done
grep -q "^== Targets ==" "$dir/report.txt" || fail "the report has no targets table"

# The stream step's peers keeping each key's totals in their output rows
# alone: their outputs are checked against the model as before.
"$bench" --dir "$dir/merged" --scale 0.05 --reps 1 --no-progress --workloads w4,latency --w4-peer-state output \
  >"$dir/merged.txt" 2>&1 || { tail -20 "$dir/merged.txt" >&2; fail "spool-bench --w4-peer-state output failed"; }
grep -qF "alone (--w4-peer-state output)" "$dir/merged.txt" || fail "the W4 report does not say where the peers keep their totals"
if "$bench" --dir "$dir/elsewhere" --workloads w4 --w4-peer-state elsewhere >/dev/null 2>&1; then
  fail "--w4-peer-state elsewhere was accepted"
fi

"$bench" plot "$dir/results.json" --out "$dir/png" >"$dir/png.txt"
"$bench" plot "$dir/results.json" --out "$dir/svg" --format svg >"$dir/svg.txt"
# A bar chart per workload with a headline figure, latency charts where
# percentiles were measured, a chart per scaling series.
for chart in w1 w2 w3 w3k w4 w5 w6 cdf snapshot vacuum w6p w7 e2e jetstream w1-latency w4-latency latency-latency \
  w2-writers-commits_per_s w4-keys-events_per_s w5-rows-asof_read_s w6-history-rewind_s history-updates-vacuum_s \
  history-updates-after_per_fresh w7-log-reopen_s; do
  png="$dir/png/$chart.png"
  [ -s "$png" ] || fail "no chart $chart.png"
  [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$chart.png is not a PNG"
  grep -q "<svg" "$dir/svg/$chart.svg" || fail "$chart.svg is not SVG"
  grep -qxF "$png" "$dir/png.txt" || fail "plot did not list $png"
done

# Bad input: an error naming the problem, exit non-zero, nothing drawn.
expect_refused() {  # FILE EXPECTED-MESSAGE
  if "$bench" plot "$1" --out "$dir/bad" >"$dir/bad.out" 2>"$dir/bad.err"; then fail "plot accepted $1"; fi
  grep -qF "$2" "$dir/bad.err" || fail "plot's error for $1 does not say '$2': $(cat "$dir/bad.err")"
  [ -z "$(ls -A "$dir/bad" 2>/dev/null)" ] || fail "plot wrote files for $1"
}
echo 'not json' >"$dir/garbage.json"
expect_refused "$dir/garbage.json" "is not JSON"
echo '{"runs": []}' >"$dir/no-results.json"
expect_refused "$dir/no-results.json" 'no "results" array'
echo '{"results": [{"workload": "w1", "title": "W1", "engine": "spool"}]}' >"$dir/short.json"
expect_refused "$dir/short.json" 'results[0] lacks the field "engine_label"'
expect_refused "$dir/missing.json" "no such file"
echo "bench smoke: every workload and engine ran; $(wc -l <"$dir/png.txt") charts drawn"
