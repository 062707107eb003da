#!/usr/bin/env bash
# End-to-end test of rewinding from the command line, the reference
# documents' story: a pipeline reads orders from a topic; a bad deployment
# doubles the amounts; the operator lists the rewind points, dry-runs a
# rewind, rewinds (by point, with the reference JSON body too), deploys the
# fix and replays: the tables equal those of a store that never had the bug.
# Then the refusals, each with its code, changing nothing.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"

spec() {  # spec STORE AMOUNT_EXPR: the pipeline with the transformation deployed
  cat >"$work/spec.json" <<JSON
{"name": "shop",
 "datasets": [{"name": "main.shop.orders"}, {"name": "main.shop.revenue"}],
 "flows": [
  {"name": "ingest", "target": "main.shop.orders",
   "source": {"topic": "$work/orders", "columns": [{"name": "id", "type": "int64", "nullable": false},
              {"name": "country", "type": "string", "nullable": false}, {"name": "amount", "type": "int64"}]},
   "steps": [{"select": ["id", "country", {"name": "amount", "expr": "$2"}]}]},
  {"name": "revenue", "target": "main.shop.revenue", "source": {"dataset": "main.shop.orders"},
   "steps": [{"aggregate": {"group_by": ["country"], "aggregates": [{"name": "orders", "fn": "count"},
              {"name": "revenue", "fn": "sum", "expr": "amount"}]}}]}
 ]}
JSON
  "$spool" pipeline set "$1" "$work/spec.json" >/dev/null || { echo "FAIL: pipeline set"; failures=$((failures + 1)); }
}
produce() {  # produce FIRST LAST
  for id in $(seq "$1" "$2"); do
    echo "{\"id\": $id, \"country\": \"$([ $((id % 3)) -eq 0 ] && echo de || echo fr)\", \"amount\": $((10 + id))}"
  done | "$spool" topic produce "$work/orders" >/dev/null
}
tables() {  # tables STORE: both tables as CSV
  "$spool" read "$1" main.shop.orders --format csv && "$spool" read "$1" main.shop.revenue --format csv
}

"$spool" topic create "$work/orders" >/dev/null
produce 1 10
produce 11 20
# The reference: a store that only ever ran the good transformation.
"$spool" init "$work/reference" >/dev/null
spec "$work/reference" "amount"
"$spool" update "$work/reference" >/dev/null
tables "$work/reference" >"$work/reference.csv"

# The story. Orders 1..10 arrive first (a topic of its own for this store).
store="$work/store"
"$spool" init "$store" >/dev/null
rm -rf "$work/orders" && "$spool" topic create "$work/orders" >/dev/null
produce 1 10
spec "$store" "amount"
check "the good update" 0 "$spool" update "$store"
check "rewind points" 0 "$spool" rewind-points "$store"
expect_output "a periodic point" "Periodic rewind summary capturing current table versions."
point=$(sed -n 's/^\([0-9a-f-]\{36\}\) .*/\1/p' "$work/out" | head -1)
expect_equal "its id is a UUID" "${#point}" "36"
check "rewind points --json" 0 "$spool" rewind-points "$store" --json --since 7d
expect_output "as JSON" "\"rewind_point_id\": \"$point\""

spec "$store" "amount * 2"  # the bad deployment
produce 11 20
check "the bad update" 0 "$spool" update "$store"
tables "$store" >"$work/bad.csv"
if cmp -s "$work/bad.csv" "$work/reference.csv"; then echo "FAIL: the bad deployment changed nothing"; failures=$((failures + 1)); fi

# Finding the last good moment: the first commit with an amount only the bug makes.
check "find the first bad commit" 0 "$spool" rewind-points find "$store" --table main.shop.orders --where "amount > 30"
expect_output "names it" "first bad commit: version [0-9]+ .*, 10 matching row"
found=$(sed -n 's/^recorded a new rewind point \([0-9a-f-]\{36\}\) at version.*/\1/p' "$work/out")
expect_equal "records a point before it" "${#found}" "36"
check "find it, as JSON" 0 "$spool" rewind-points find "$store" --table main.shop.orders --where "amount > 30" --json
expect_output "the commit and the point" '"matching_rows": 10'
expect_output "the point's id" '"rewind_point_id": "[0-9a-f-]{36}"'
check "nothing matches" 0 "$spool" rewind-points find "$store" --table main.shop.orders --where "amount > 1000"
expect_output "says so" "nothing to rewind"
check "a bad predicate" 2 "$spool" rewind-points find "$store" --table main.shop.orders --where "amout > 30"
expect_output "names the column" "unknown column 'amout'"

check "dry run" 0 "$spool" update "$store" --rewind-point "$point" --dry-run
expect_output "changes nothing" "dry run: a rewind to version [0-9]+ .* is valid; nothing was changed"
tables "$store" >"$work/after-dry-run.csv"
expect_equal "tables unchanged by the dry run" "$(cmp -s "$work/after-dry-run.csv" "$work/bad.csv" && echo same)" "same"

cat >"$work/rewind.json" <<JSON
{
  "cause": "USER_ACTION",
  "rewind_spec": {
    "rewind_point_id": "$found",
    "datasets": [
      {
        "identifier": "main.shop.orders",
        "cascade": true,
        "reset_checkpoints": true
      }
    ],
    "dry_run": false
  }
}
JSON
check "rewind with the reference body" 0 "$spool" update "$store" --json @"$work/rewind.json"
expect_output "says where" "rewound the pipeline to version [0-9]+ "
expect_output "and how to replay" "Replay is the next update: spool update "
spec "$store" "amount"  # the fix
check "replay" 0 "$spool" update "$store"
tables "$store" >"$work/replayed.csv"
expect_equal "tables equal the run without the bug" "$(cmp -s "$work/replayed.csv" "$work/reference.csv" && echo same)" "same"
check "archive" 0 "$spool" archive "$store"
expect_output "lists the cut history" "epoch-0+[0-9]+ +[0-9]+-[0-9]+ +[0-9]+ .* yes"
cut=$(sed -n 's|.*/\(epoch-[0-9]*\) .*|\1|p' "$work/out" | head -1)
last=$(sed -n 's|.*/epoch-[0-9]* *[0-9]*-\([0-9]*\) .*|\1|p' "$work/out" | head -1)
{ "$spool" read "$store" main.shop.orders --archive "$cut" --version "$last" --format csv &&
  "$spool" read "$store" main.shop.revenue --archive "$cut" --version "$last" --format csv; } >"$work/archived.csv"
expect_equal "time travel into the cut reads the bad tables" "$(cmp -s "$work/archived.csv" "$work/bad.csv" && echo same)" "same"
check "the archive as JSON" 0 "$spool" archive "$store" --json
expect_output "names the cut and its versions" "\"cut\": \"$cut\""
expect_output "its last version" "\"last_version\": $last,"
check "a cut that is not there" 2 "$spool" read "$store" main.shop.orders --archive epoch-999999 --version 1
expect_output "names the cuts" "the archive has no cut epoch-999999 \(its cuts: epoch-"
check "events" 0 "$spool" events "$store" --type rewind_completed
expect_output "the rewind is in the event log" "Rewound the pipeline to version"

# Refusals: a code each, nothing changed.
before=$(tables "$store" | md5sum)
check "unknown point" 2 "$spool" update "$store" --rewind-point 00000000-0000-4000-8000-000000000000
expect_output "its code" "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND"
check "bad timestamp" 2 "$spool" update "$store" --rewind-timestamp "yesterday"
expect_output "its code" "INVALID_REWIND_SPECIFICATION.INVALID_TIMESTAMP_FORMAT"
check "both targets" 2 "$spool" update "$store" --rewind-point "$point" --rewind-timestamp "2026-09-29 08:36:55"
expect_output "its code" "INVALID_REWIND_SPECIFICATION.MULTIPLE_REWIND_TARGETS"
check "before the first commit" 2 "$spool" update "$store" --rewind-timestamp "2001-01-01 00:00:00"
expect_output "its code and the oldest point" "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION: .*oldest possible point is version"
echo '{"rewind_spec": {"rewind_point_id": "x", "datasets": [{"identifier": "main.shop.orders", "cascade": "yes"}]}}' >"$work/bad.json"
check "malformed body" 2 "$spool" update "$store" --json @"$work/bad.json"
expect_output "names the field" "rewind_spec.datasets\[0\].cascade: expected true or false"
expect_equal "nothing changed" "$(tables "$store" | md5sum)" "$before"
check "validate only" 0 "$spool" update "$store" --validate-only
expect_output "writes nothing" "is valid: 2 datasets, 2 flows; no table was changed"

# Refresh kinds, with the reference bodies.
check "refresh selection" 0 "$spool" update "$store" --json '{"refresh_selection": ["main.shop.orders"]}'
expect_output "skips the others" "revenue .* skipped"
check "reset a table's name" 2 "$spool" update "$store" --json '{"reset_checkpoint_selection": ["revenue2"]}'
expect_output "names the flows" "no flow named 'revenue2' \(its flows: ingest, revenue\)"
check "full refresh of an upstream alone" 2 "$spool" update "$store" --full-refresh-table main.shop.orders
expect_output "names the downstream table" "main.shop.revenue reads main.shop.orders"
check "full refresh of an upstream alone, validated" 2 "$spool" update "$store" --full-refresh-table main.shop.orders --dry-run
expect_output "refused the same" "main.shop.revenue reads main.shop.orders"
check "a full refresh's dry run" 0 "$spool" update "$store" --full-refresh --dry-run
expect_output "validates it" "is valid: 2 datasets, 2 flows; no table was changed"
expect_equal "nothing changed" "$(tables "$store" | md5sum)" "$before"
check "full refresh" 0 "$spool" update "$store" --json '{"full_refresh": true}'
tables "$store" >"$work/refreshed.csv"
expect_equal "rebuilt from the topic: as the reference" "$(cmp -s "$work/refreshed.csv" "$work/reference.csv" && echo same)" "same"
check "history shows it" 0 "$spool" history "$store" main.shop.orders
expect_output "a FULL REFRESH commit" "FULL REFRESH"

# A rewind of revenue alone, to the point before the full refresh: one
# RESTORE commit; orders untouched.
orders_before=$("$spool" read "$store" main.shop.orders --format csv | md5sum)
echo "{\"rewind_spec\": {\"rewind_point_id\": \"$point\", \"datasets\": [{\"identifier\": \"main.shop.revenue\", \"cascade\": true, \"reset_checkpoints\": true}]}}" >"$work/subset.json"
check "rewind of one dataset" 0 "$spool" update "$store" --json @"$work/subset.json"
expect_output "names it" "rewound main.shop.revenue to version [0-9]+ "
check "history shows the restore" 0 "$spool" history "$store" main.shop.revenue
expect_output "a RESTORE commit" "RESTORE"
expect_equal "orders untouched" "$("$spool" read "$store" main.shop.orders --format csv | md5sum)" "$orders_before"
check "replay" 0 "$spool" update "$store"
tables "$store" >"$work/subset-replayed.csv"
expect_equal "revenue rebuilt, counted once" "$(cmp -s "$work/subset-replayed.csv" "$work/reference.csv" && echo same)" "same"

# spool rewind: the shortcuts, and undo.
check "no point a day old" 2 "$spool" rewind "$store" --yesterday
expect_output "says so" "no rewind point on the current history was recorded at or before"
check "two targets" 2 "$spool" rewind "$store" --latest --undo
expect_output "says which to give" "give exactly one of --point, --timestamp, --latest, --yesterday and --undo"
check "the latest point, dry run" 0 "$spool" rewind "$store" --latest --dry-run
expect_output "validates" "dry run: a rewind to version [0-9]+ .* is valid; nothing was changed"
before_rewind=$(tables "$store" | md5sum)
check "rewind by flags" 0 "$spool" rewind "$store" --point "$point"
check "undo" 0 "$spool" rewind "$store" --undo
expect_output "says so" "undid the rewind of update .* to version [0-9]+: the store is at version [0-9]+ again"
expect_equal "the tables are back" "$(tables "$store" | md5sum)" "$before_rewind"
check "undo again" 2 "$spool" rewind "$store" --undo
expect_output "undone already" "REWIND_UNDO_NOT_POSSIBLE: the last rewind was undone already"

# Pictures: the graph, a rewind's preview, the timelines.
expect_svg() {  # expect_svg NAME FILE PATTERN...: FILE is an SVG document holding every PATTERN
  local name=$1 file=$2
  shift 2
  if ! head -2 "$file" 2>/dev/null | grep -q "<svg xmlns=\"http://www.w3.org/2000/svg\"" || ! tail -1 "$file" | grep -q "</svg>"; then
    echo "FAIL $name: $file is not an SVG document"; failures=$((failures + 1)); return
  fi
  for pattern in "$@"; do
    if ! grep -qE -- "$pattern" "$file"; then echo "FAIL $name: no /$pattern/ in $file"; failures=$((failures + 1)); return; fi
  done
  echo "ok   $name"
}
check "pipeline show --plot" 0 "$spool" pipeline show "$store" --plot "$work/graph.svg"
expect_output "says where" "wrote $work/graph.svg"
expect_svg "the graph" "$work/graph.svg" "main.shop.orders" "main.shop.revenue" "topic " "marker-end"
check "rewind --dry-run --plot" 0 "$spool" rewind "$store" --point "$point" --dry-run --plot "$work/preview.svg"
expect_svg "the preview" "$work/preview.svg" "rewind preview: the pipeline to version" "back to table version" "replays from"
check "--plot without --dry-run" 2 "$spool" rewind "$store" --point "$point" --plot "$work/nothing.svg"
expect_equal "draws nothing" "$(test -e "$work/nothing.svg" && echo drawn || echo none)" "none"
check "history --plot of a table" 0 "$spool" history "$store" main.shop.revenue --plot "$work/revenue.svg"
expect_svg "the table's timeline" "$work/revenue.svg" "history of main.shop.revenue" "<circle" "version [0-9]+: RESTORE"
check "history --plot of the store" 0 "$spool" history "$store" --plot "$work/store.svg"
expect_svg "the store's timeline" "$work/store.svg" "epoch-[0-9]+ \(cut by a rewind\)" "rewind point"
check "a plot that cannot be written" 2 "$spool" pipeline show "$store" --plot "$work/no/such/dir/g.svg"
expect_output "says why" "writing the plot"
check "history without a table or --plot" 2 "$spool" history "$store"
expect_output "says what to give" "give the table"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all rewind CLI checks passed"
