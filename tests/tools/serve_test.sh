#!/usr/bin/env bash
# `spool serve` driven with curl as the reference documents do: the rewind
# examples as written (host and ids aside), the updates and events lists,
# authentication, and bad requests each refused with its status, changing
# nothing.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"

"$spool" demo --dir "$work/demo" >/dev/null || { echo "FAIL the demo store"; exit 1; }
store="$work/demo/store"
export DATABRICKS_TOKEN=test-token-1234
echo "$DATABRICKS_TOKEN" >"$work/token"
check "no token, no server" 2 env -u SPOOL_API_TOKEN "$spool" serve "$store"
expect_output "says how to give one" "give --token-file FILE or set SPOOL_API_TOKEN"
chmod 644 "$work/token"
check "a token file others may read, no server" 2 "$spool" serve "$store" --token-file "$work/token"
expect_output "says why and how to fix it" "is open to group or others \(mode 0644\): \`chmod 600"
chmod 600 "$work/token"

# The server prints its address once it listens: read it from a FIFO.
mkfifo "$work/serve.out"
"$spool" serve "$store" --listen 127.0.0.1:0 --token-file "$work/token" --max-body 4096 >"$work/serve.out" 2>&1 &
server=$!
exec 3<"$work/serve.out"
read -r banner <&3
base=$(echo "$banner" | sed -n 's|.* on \(http://[^ ]*\)/api/2.0/pipelines/\([0-9a-f-]*\)/ ;.*|\1|p')
pipeline=$(echo "$banner" | sed -n 's|.*/api/2.0/pipelines/\([0-9a-f-]*\)/ ;.*|\1|p')
expect_equal "it says where it listens" "${#pipeline}" "36"
api="$base/api/2.0/pipelines/$pipeline"

call() {  # call NAME EXPECTED_STATUS CURL_ARGS...: the body in $work/out
  local name=$1 expected=$2
  shift 2
  local status
  status=$(curl -sS -o "$work/out" -w '%{http_code}' "$@")
  if [ "$status" = "$expected" ]; then echo "ok   $name"; else
    echo "FAIL $name: status $status, expected $expected"; cat "$work/out"; echo; failures=$((failures + 1)); fi
}
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" "$work/out" | head -1; }
# Follows an update until it ends (each look is one request; bounded).
await() {
  local state=""
  [ -n "$1" ] || { echo "no update"; return; }
  for _ in $(seq 1 2000); do
    curl -sS -o "$work/out" -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/updates/$1"
    state=$(field state)
    case "$state" in COMPLETED | FAILED | CANCELED) break ;; esac
  done
  echo "$state"
}

call "rewind points" 200 -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/rewind-points"
point=$(field rewind_point_id)
expect_equal "a point to rewind to" "${#point}" "36"

# The reference documents' examples, as written: the same request with a
# rewind_point_id or a rewind_timestamp as its target.
reference_rewind() {  # reference_rewind NAME '"rewind_point_id": "…"'
  call "$1" 200 -X POST \
    "$api/updates" \
    -H "Authorization: Bearer $DATABRICKS_TOKEN" \
    -H "Content-Type: application/json" \
    -d '{
      "cause": "USER_ACTION",
      "rewind_spec": {
        '"$2"',
        "datasets": [{"identifier": "main.shop.orders", "cascade": true, "reset_checkpoints": true}],
        "dry_run": false
      }
    }'
}
reference_rewind "rewind to a point (the reference example)" '"rewind_point_id": "'"$point"'"'
update=$(field update_id)
expect_equal "it completes" "$(await "$update")" "COMPLETED"
reference_rewind "rewind to a timestamp (the reference example)" \
  '"rewind_timestamp": "'"$(date -u -d '+2 seconds' '+%Y-%m-%d %H:%M:%S')"'"'
expect_equal "it completes too" "$(await "$(field update_id)")" "COMPLETED"
call "replay" 200 -X POST "$api/updates" -H "Authorization: Bearer $DATABRICKS_TOKEN" -d '{}'
expect_equal "the replay completes" "$(await "$(field update_id)")" "COMPLETED"
call "the updates, newest first" 200 -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/updates?max_results=3"
expect_output "the rewind among them" "\"update_id\":\"$update\""
call "events by type" 200 -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/events?event_type=rewind_completed"
expect_output "the rewinds' events" "Rewound the pipeline to version"
call "stop" 200 -X POST -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/stop"

# Under load: while an update works through 200,000 new orders, the server
# keeps answering reads (at most 400 requests, each given 10 s), refuses a
# second update with 409, and the update completes.
awk 'BEGIN { for (i = 100001; i <= 300000; i++) printf "{\"order_id\": %d, \"customer_id\": %d, \"country\": \"de\", \"amount\": 1}\n", i, i % 5 + 1 }' \
  >"$work/load.jsonl"
"$spool" topic produce "$work/demo/orders" --file "$work/load.jsonl" >/dev/null || echo "FAIL producing the load"
call "an update under load" 200 -X POST "$api/updates" -H "Authorization: Bearer $DATABRICKS_TOKEN" -d '{}'
loaded=$(field update_id)
answered=0 refused=0 while_running=0
for i in $(seq 1 400); do
  case $((i % 4)) in
    0) path="events?max_results=5" ;; 1) path="updates/$loaded" ;; 2) path="rewind-points" ;; 3) path="updates?max_results=2" ;;
  esac
  status=$(curl -sS --max-time 10 -o "$work/out" -w '%{http_code}' -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/$path")
  if [ "$status" = 200 ]; then answered=$((answered + 1)); else refused=$((refused + 1)); fi
  if [ "$path" = "updates/$loaded" ]; then
    case "$(field state)" in
      RUNNING | SETTING_UP_TABLES | INITIALIZING) while_running=$((while_running + 1)) ;;
      COMPLETED | FAILED | CANCELED) [ "$while_running" -gt 0 ] && break ;;
    esac
  fi
  if [ "$i" = 8 ]; then
    call "a second update while one runs" 409 -X POST "$api/updates" -H "Authorization: Bearer $DATABRICKS_TOKEN" -d '{}'
    expect_output "says which runs" '"error_code":"RESOURCE_CONFLICT"'
  fi
done
expect_equal "every read answered under load" "$refused" "0"
expect_equal "answers came while the update ran" "$([ "$while_running" -ge 3 ] && echo yes || echo "only $while_running")" "yes"
expect_equal "the loaded update completes" "$(await "$loaded")" "COMPLETED"
echo "     ($answered reads answered, $while_running of them while the update ran)"

# Beside the server, which holds the store for writing, the commands that
# read work (opened read-only); one that writes is refused.
check "spool read beside the server" 0 "$spool" read "$store" main.shop.revenue --format csv
check "spool history beside the server" 0 "$spool" history "$store" main.shop.orders --limit 3
expect_output "its newest commits" "STREAMING UPDATE"
check "spool events beside the server" 0 "$spool" events "$store" --limit 3
check "spool rewind-points beside the server" 0 "$spool" rewind-points "$store"
check "spool pipeline show beside the server" 0 "$spool" pipeline show "$store"
check "spool table list beside the server" 0 "$spool" table list "$store"
expect_output "lists the tables" "main.shop.orders"
check "spool log inspect beside the server" 0 "$spool" log inspect "$store/log"
check "spool log verify beside the server" 0 "$spool" log verify "$store/log"
check "spool sql beside the server" 0 "$spool" sql "$store" "SELECT count(*) FROM main.shop.orders" --format csv
sql_orders=$(tail -1 "$work/out")
check "spool read of the same table" 0 "$spool" read "$store" main.shop.orders --format csv
expect_equal "SQL counts what read reads" "$sql_orders" "$(($(wc -l <"$work/out") - 1))"
# SQL over HTTP, the reference's statement API.
call "a SQL statement" 200 -X POST "$base/api/2.0/sql/statements" -H "Authorization: Bearer $DATABRICKS_TOKEN" \
  -d '{"statement": "SELECT count(*) AS n FROM main.shop.orders", "wait_timeout": "30s"}'
expect_output "its state" '"status":\{"state":"SUCCEEDED"\}'
expect_output "its count" "\"data_array\":\\[\\[\"$sql_orders\"\\]\\]"
call "a SQL statement that writes" 400 -X POST "$base/api/2.0/sql/statements" \
  -H "Authorization: Bearer $DATABRICKS_TOKEN" -d '{"statement": "DELETE FROM main.shop.orders"}'
expect_output "is refused" "may not be modified"
call "a SQL statement without a token" 401 -X POST "$base/api/2.0/sql/statements" -d '{"statement": "SELECT 1"}'
check "a snapshot beside the server is refused" 2 "$spool" snapshot "$store"
expect_output "as the store is busy" "is open in another process"

# Refusals, each changing nothing (the newest event stays the newest).
newest_event() { curl -sS -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/events?max_results=1" | sed -n 's/.*"sequence":\([0-9]*\).*/\1/p'; }
before=$(newest_event)
expect_equal "the newest event is known" "$([ -n "$before" ] && echo yes)" "yes"
call "no token" 401 -X POST "$api/updates" -d '{"full_refresh": true}'
expect_output "says so" '"error_code":"UNAUTHENTICATED"'
call "a wrong token" 401 -X POST -H "Authorization: Bearer nope" "$api/updates" -d '{"full_refresh": true}'
call "malformed JSON" 400 -X POST -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/updates" -d '{"cause": '
expect_output "names the problem" '"error_code":"INVALID_PARAMETER_VALUE"'
call "an unknown point" 400 -X POST -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/updates" \
  -d '{"rewind_spec": {"rewind_point_id": "00000000-0000-4000-8000-000000000000"}}'
expect_output "its code" '"error_code":"INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND"'
head -c 5000 /dev/zero | tr '\0' ' ' >"$work/big.json"
call "a body over the limit" 413 -X POST -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/updates" \
  --data-binary @"$work/big.json"
expect_output "says so" '"error_code":"REQUEST_LIMIT_EXCEEDED"'
call "an unknown update" 404 -H "Authorization: Bearer $DATABRICKS_TOKEN" "$api/updates/nope"
call "an unknown pipeline" 404 -H "Authorization: Bearer $DATABRICKS_TOKEN" "$base/api/2.0/pipelines/nope/updates"
expect_equal "nothing happened" "$(newest_event)" "$before"

kill -INT "$server"
wait "$server"
expect_equal "Ctrl-C stops it cleanly" "$?" "0"
exec 3<&-

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all serve checks passed"
