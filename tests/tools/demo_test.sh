#!/usr/bin/env bash
# `spool demo`, the README's main job: it must exit 0 with its final check
# holding, leave a store the printed commands can explore, and refuse a
# directory that is not empty; and `spool demo --jetstream` likewise.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"

check "the demo" 0 "$spool" demo --dir "$work/demo"
cp "$work/out" "$work/demo.out"
expect_output "shows the commands" '\$ spool rewind .*/store --point [0-9a-f-]{36} --dry-run'
expect_output "the tables equal the run without the bug" "main.shop.revenue +4 rows +equal"
expect_output "its final check holds" "demo: all checks passed"
# The printed commands run as printed: the program's own path, as it is
# not on the PATH here.
expect_output "explore commands name this program" "^  $spool read .*/store main.shop.customers$"
check "the store is left to explore" 0 "$spool" read "$work/demo/store" main.shop.customers
expect_output "customers as SCD type 2" "Jr\."
command=$(sed -n 's/^  [^ ]*spool \(read .* --archive .*\)   #.*/\1/p' "$work/demo.out")
# shellcheck disable=SC2086  # the printed command, split into its words
check "the printed time travel into the cut history" 0 "$spool" $command
expect_output "reads the doubled revenue" "^de +24 +14796"
check "a directory that is not empty" 2 "$spool" demo --dir "$work/demo"
expect_output "is refused" "is not empty"

# The JetStream demo: a local nats-server, orders in, totals out, a
# rewind, and the consumer converging; the server stopped afterwards.
check "the JetStream demo" 0 "$spool" demo --jetstream --dir "$work/jsdemo"
expect_output "orders flow in from the stream" "nats: published orders 1-60 to orders.new"
expect_output "totals flow out through the sink" "^revenue_out +4 +version [0-9]+ +ok"
expect_output "the rewind keeps the sink's progress" "kept what changed since outside the pipeline: __spool.sinks.progress"
expect_output "the consumer converges" "downstream consumer +equal to main.shop.revenue"
expect_output "the tables equal the run without the bug" "main.shop.revenue +4 rows +equal"
expect_output "its final check holds" "demo: all checks passed"
if pgrep -f "nats-server -c $work/jsdemo" >/dev/null; then
  echo "FAIL: the demo's nats-server still runs"
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all demo checks passed"
