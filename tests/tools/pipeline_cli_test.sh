#!/usr/bin/env bash
# End-to-end test of `spool pipeline set | show` and `spool update` as an
# operator drives them: a spec with a topic source, a filter, an aggregate
# and a files source; updates that pick up new messages and files exactly
# once; a continuous update bounded by --max-batches; the events. Then the
# mistakes: a malformed or inconsistent spec (exit 2, naming the place,
# recording nothing), an update without a definition, a bad record (exit 3,
# naming file and line, committing nothing), an incompatible change (refused
# before it runs, exit 2, naming the flow and the full refresh it needs, as
# its validation does), which a full refresh then adopts.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"
store="$work/store"


history_count() { "$spool" history "$store" __spool.pipeline.definition 2>/dev/null | grep -c 'SET PIPELINE'; }
newest_version() { "$spool" log inspect "$store/log" 2>/dev/null | sed -n 's/.*newest version \([0-9]*\).*/\1/p' | head -1; }

mkdir -p "$work/landing"
"$spool" init "$store" >/dev/null
"$spool" topic create "$work/orders" >/dev/null
printf '%s\n' '{"id": 1, "country": "de", "amount": 10}' '{"id": 2, "country": "fr", "amount": 0}' \
  '{"id": 3, "country": "de", "amount": 5}' | "$spool" topic produce "$work/orders" >/dev/null
cat >"$work/spec.json" <<JSON
{"name": "shop",
 "datasets": [{"name": "main.shop.orders"}, {"name": "main.shop.revenue"}, {"name": "main.shop.returns"}],
 "flows": [
  {"name": "ingest", "target": "main.shop.orders",
   "source": {"topic": "$work/orders", "columns": [{"name": "id", "type": "int64", "nullable": false},
              {"name": "country", "type": "string", "nullable": false}, {"name": "amount", "type": "int64"}]},
   "steps": [{"filter": "amount > 0"}]},
  {"name": "revenue", "target": "main.shop.revenue", "source": {"dataset": "main.shop.orders"},
   "steps": [{"aggregate": {"group_by": ["country"], "aggregates": [{"name": "orders", "fn": "count"},
              {"name": "revenue", "fn": "sum", "expr": "amount"}]}}]},
  {"name": "returns", "target": "main.shop.returns",
   "source": {"files": "$work/landing", "format": "csv", "columns": [{"name": "id", "type": "int64"}]}}
 ]}
JSON

check "update without a definition" 2 "$spool" update "$store"
expect_output "says how to define one" "spool pipeline set"
check "pipeline set" 0 "$spool" pipeline set "$store" "$work/spec.json"
expect_output "prints the id" "pipeline [0-9a-f-]{36} \(shop\)"
check "pipeline show" 0 "$spool" pipeline show "$store"
expect_output "shows the flows" "revenue +dataset main.shop.orders"
check "pipeline show --json" 0 "$spool" pipeline show "$store" --json
expect_output "prints the spec" '"name": "main.shop.revenue"'

check "update" 0 "$spool" update "$store"
expect_output "completes" "COMPLETED"
expect_no_output "no progress bar when stderr is not a terminal" "flow ingest  "
check "read revenue" 0 "$spool" read "$store" main.shop.revenue --format csv
expect_equal "revenue per country" "$(tail -n +2 "$work/out")" "de,2,15"
check "update again: nothing new" 0 "$spool" update "$store"
expect_output "no batches" "ingest +0 +0"

echo '{"id": 4, "country": "fr", "amount": 7}' | "$spool" topic produce "$work/orders" >/dev/null
printf 'id\n1\n' >"$work/landing/.r1.csv" && mv "$work/landing/.r1.csv" "$work/landing/r1.csv"
check "continuous update, bounded, with --progress" 0 "$spool" update "$store" --continuous --max-batches 3 --progress
expect_output "stops" "CANCELED|COMPLETED"
expect_output "draws the flow's progress" "flow ingest  \[#+-*\] +[0-9]+%  [0-9,]+/[0-9,]+ records"
check "snapshot --progress" 0 "$spool" --progress snapshot "$store"
expect_output "draws the entries written" "snapshot  [0-9,]+ entries"
check "--progress and --no-progress together" 2 "$spool" snapshot "$store" --progress --no-progress
check "read revenue after" 0 "$spool" read "$store" main.shop.revenue --format csv
expect_equal "the new message counted once" "$(tail -n +2 "$work/out" | tr '\n' ' ')" "de,2,15 fr,1,7 "
check "read returns" 0 "$spool" read "$store" main.shop.returns --format csv
expect_equal "the file read once" "$(tail -n +2 "$work/out")" "1"
check "events" 0 "$spool" events "$store" --type flow_progress
expect_output "flow_progress events" "Flow 'revenue' committed batch"
newest_event=$("$spool" events "$store" --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | tail -1)
check "events --limit 1" 0 "$spool" events "$store" --limit 1 --json
expect_output "shows the newest" "\"id\": \"$newest_event\""

# Spool's own tables are not the user's to change.
state_table=__spool.state.revenue__state0_aggregate
state_before=$("$spool" read "$store" "$state_table" --format csv | md5sum)
check "drop operator state" 2 "$spool" table drop "$store" "$state_table"
expect_output "is refused, naming the table" "table $state_table is Spool's own"
check "alter operator state" 2 "$spool" table alter "$store" "$state_table" --set-property a=b
echo '{"country": "de"}' >"$work/state.jsonl"
check "write operator state" 2 "$spool" write "$store" "$state_table" --file "$work/state.jsonl"
check "delete from operator state" 2 "$spool" write "$store" "$state_table" --file "$work/state.jsonl" --delete
check "restore operator state" 2 "$spool" restore "$store" "$state_table" --version 1
check "create a table under __spool" 2 "$spool" table create "$store" __spool.mine.t --column id:int64
expect_equal "the state is untouched" "$("$spool" read "$store" "$state_table" --format csv | md5sum)" "$state_before"

# Mistakes: nothing recorded, nothing run.
before=$(history_count)
echo '{"datasets": [], "flows": [], "extra": 1}' >"$work/bad.json"
check "unknown field" 2 "$spool" pipeline set "$store" "$work/bad.json"
expect_output "names the field" "unknown field 'extra'"
sed 's/amount > 0/amout > 0/' "$work/spec.json" >"$work/typo.json"
check "unknown column" 2 "$spool" pipeline set "$store" "$work/typo.json"
expect_output "names the place and the column" "flows\[0\] \"ingest\".steps\[0\].filter: at column 1: unknown column 'amout'"
echo '{' >"$work/broken.json"
check "not JSON" 2 "$spool" pipeline set "$store" "$work/broken.json"
expect_output "says so" "not valid JSON"
check "missing file" 2 "$spool" pipeline set "$store" "$work/nope.json"
expect_equal "no definition recorded" "$(history_count)" "$before"

printf 'id\nseven\n' >"$work/landing/r2.csv"
check "bad record fails the update (exit 3: FAILED)" 3 "$spool" update "$store"
expect_output "names the file and line" "r2.csv line 2"
check "read returns after the failure" 0 "$spool" read "$store" main.shop.returns --format csv
expect_equal "nothing partial committed" "$(tail -n +2 "$work/out")" "1"
rm "$work/landing/r2.csv"

sed 's/"fn": "sum"/"fn": "max"/' "$work/spec.json" >"$work/changed.json"
check "incompatible definition is recorded" 0 "$spool" pipeline set "$store" "$work/changed.json"
events_before=$("$spool" events "$store" --json | md5sum)
check "but its validation refuses it" 2 "$spool" update "$store" --validate-only
expect_output "naming the flow and the remedy" "Flow 'revenue' has state .* full refresh"
check "and so is its update, before it runs" 2 "$spool" update "$store"
expect_output "with the same error" "Flow 'revenue' has state .* full refresh"
expect_equal "leaving no trace" "$("$spool" events "$store" --json | md5sum)" "$events_before"
check "a full refresh's validation accepts it" 0 "$spool" update "$store" --full-refresh-table main.shop.revenue --dry-run
check "a full refresh adopts it" 0 "$spool" update "$store" --full-refresh-table main.shop.revenue
check "read revenue rebuilt" 0 "$spool" read "$store" main.shop.revenue --format csv
expect_equal "with max instead of sum" "$(tail -n +2 "$work/out" | tr '\n' ' ')" "de,2,10 fr,1,7 "

# A changed column type (the aggregate's output) needs a full refresh too;
# it takes the new schema, recorded in the table's history.
sed -e 's/"fn": "sum"/"fn": "avg"/' "$work/spec.json" >"$work/typed.json"
check "a type change is recorded" 0 "$spool" pipeline set "$store" "$work/typed.json"
check "a type change is refused without a full refresh" 2 "$spool" update "$store" --validate-only
check "a full refresh of the table with cascade" 0 "$spool" update "$store" --full-refresh-table main.shop.revenue --cascade
check "read the new type" 0 "$spool" read "$store" main.shop.revenue --format csv
expect_equal "avg is a double" "$(tail -n +2 "$work/out" | tr '\n' ' ')" "de,2,7.5 fr,1,7 "
check "history shows the schema change" 0 "$spool" history "$store" main.shop.revenue --json
expect_output "its FULL REFRESH commit names it" "schema_changes"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all pipeline CLI checks passed"
