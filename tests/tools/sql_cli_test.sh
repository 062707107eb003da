#!/usr/bin/env bash
# End-to-end test of `spool sql` as a user drives it: a query in each
# output format, statements and dot commands from standard input (the
# shell without a terminal, and on one), the reference documents' Spark constructs,
# mistakes (each exit 2, naming what is wrong, changing nothing), and
# queries beside writers committing in other processes — one of them
# killed with SIGKILL — each seeing one whole commit.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"
store="$work/s"
kv=main.t.kv

expect_exactly() {  # expect_exactly NAME TEXT: the output is TEXT
  if [ "$(cat "$work/out")" = "$2" ]; then echo "ok   $1"; else echo "FAIL $1: got:"; cat "$work/out"; echo "wanted:"; echo "$2"; failures=$((failures + 1)); fi
}

check init 0 "$spool" init "$store"
check create 0 "$spool" table create "$store" "$kv" --column k:int64 --column v:int64 --column note:string \
  --key k
# Every commit writes the same value into all 50 rows.
write_all() {
  seq 1 50 | awk -v v="$1" 'BEGIN { print "k,v,note" } { print $1 "," v ",n" $1 }' |
    "$spool" write "$store" "$kv" --format csv >/dev/null
}
write_all 1
write_all 2

# --- Queries and formats -----------------------------------------------------------
check csv 0 "$spool" sql "$store" "SELECT k, v, note FROM $kv WHERE k <= 2" --format csv
expect_exactly csv-rows "k,v,note
1,2,n1
2,2,n2"
check json 0 "$spool" sql "$store" "SELECT k, v FROM \"$kv\" WHERE k = 3" --format json
expect_exactly json-rows '{"k":3,"v":2}'
check table 0 "$spool" sql "$store" "SELECT count(*) AS n, max(v) FROM $kv"
expect_output table-header "^n +max\(v\)"
expect_output table-row "^50 +2"
check as-of 0 "$spool" sql "$store" "SELECT DISTINCT v FROM $kv VERSION AS OF 2" --format csv
expect_exactly as-of-rows "v
1"
check history 0 "$spool" sql "$store" "SELECT version, operation FROM (DESCRIBE HISTORY $kv) ORDER BY version" --format csv
expect_exactly history-rows "version,operation
1,CREATE TABLE
2,WRITE
3,WRITE"
check changes 0 "$spool" sql "$store" \
  "SELECT _change_type, count(*) FROM table_changes('$kv', 3) GROUP BY 1 ORDER BY 1" --format csv
expect_exactly changes-rows "_change_type,count(*)
update_postimage,50
update_preimage,50"
check two-statements 0 "$spool" sql "$store" "SELECT 1 AS a; SELECT 2 AS b" --format csv
expect_exactly two-statements-rows "a
1
b
2"

# --- The shell, reading standard input ----------------------------------------------
check shell 0 "$spool" sql "$store" --format csv <<EOF
.tables
.mode json
SELECT k
  FROM $kv
  WHERE k = 7;
.schema $kv
CREATE TEMP TABLE scratch AS SELECT k FROM $kv WHERE k < 4;
SELECT count(*) AS c FROM scratch;
.quit
SELECT 'not run';
EOF
expect_output shell-tables "^$kv$"
expect_output shell-functions "^table_changes|^history\(\)$"
expect_output shell-mode-json '^\{"k":7\}$'
expect_output shell-schema "^CREATE TABLE \"$kv\" \(k int64 NOT NULL, v int64, note string, PRIMARY KEY \(k\)\);"
expect_output shell-scratch '^\{"c":3\}$'
expect_no_output shell-quit "not run"
check shell-error 2 "$spool" sql "$store" <<EOF
SELECT 1;
SELEC 2;
.bogus
EOF
expect_output shell-error-says "syntax error"
expect_output shell-bad-command "unknown command .bogus"

# --- The shell on a terminal (script(1) gives it one): prompts, a statement
# over two lines, and the history kept in $HOME.
printf '.mode csv\nSELECT 41 + 1\n  AS answer;\n.quit\n' |
  HOME="$work" script -qec "$spool sql $store" /dev/null | tr -d '\r' >"$work/out"
expect_output terminal-prompt "^spool> SELECT 41 \+ 1$"
expect_output terminal-continues "^  \.\.\.>   AS answer;$"
expect_output terminal-answer "^42$"
expect_equal terminal-history "$(grep -c 'answer;' "$work/.spool_sql_history")" "1"

# --- Mistakes: exit 2, say what is wrong, change nothing ----------------------------
newest() { "$spool" sql "$store" "SELECT max(version) FROM history('$kv')" --format csv | tail -1; }
before=$(newest)
refused() {  # refused NAME PATTERN SQL...
  local name=$1 pattern=$2
  shift 2
  check "$name" 2 "$spool" sql "$store" "$@"
  expect_output "$name-says" "$pattern"
}
refused syntax "near \"SELEC\": syntax error" "SELEC 1"
refused unknown-table "no such table: main.t.nope" "SELECT * FROM \"main.t.nope\""
refused unknown-column "no such column: nope" "SELECT nope FROM $kv"
refused version-out-of-range "version 99 is not available" "SELECT * FROM table_at('$kv', 99)"
refused write "may not be modified" "DELETE FROM $kv"
refused attach "ATTACH and DETACH are not allowed" "ATTACH '$work/x.db' AS x"
refused spark-cast "x::type is not understood" "SELECT v::string FROM $kv"
refused interval "INTERVAL is understood only as" "SELECT INTERVAL 1 DAY"
refused timeout "timeout of 0.001 s" --timeout 0.001 \
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
refused bad-format "--format takes table, csv or json" "SELECT 1" --format xml
expect_equal "nothing changed" "$(newest)" "$before"
[ -e "$work/x.db" ] && { echo "FAIL attach made a file"; failures=$((failures + 1)); }
check not-a-store 2 "$spool" sql "$work/none" "SELECT 1"
expect_output not-a-store-says "not a Spool store"

# --- Ctrl-C stops the running statement ---------------------------------------------
# Once rows come out, the statement runs (its handler is in place): SIGINT
# then ends it with exit 2, saying so.
mkfifo "$work/rows"
"$spool" sql "$store" --format csv \
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c" >"$work/rows" 2>"$work/err" &
query=$!
exec 4<"$work/rows"
read -r _ <&4 && read -r _ <&4
kill -INT "$query"
cat <&4 >/dev/null
exec 4<&-
wait "$query"
expect_equal "Ctrl-C: exit 2" "$?" "2"
cp "$work/err" "$work/out"
expect_output "Ctrl-C: says so" "the statement was interrupted"

# --- Beside writers in other processes ----------------------------------------------
# Writers commit values 3, 4, … one process after another; one is killed
# with SIGKILL while it writes. Every query sees 50 rows of one value, at
# least the last one written before it started.
(for v in $(seq 3 40); do write_all "$v"; done) 2>/dev/null &
writers=$!
torn=0 queries=0
while kill -0 "$writers" 2>/dev/null; do
  written=$(newest)
  answer=$("$spool" sql "$store" "SELECT count(*), min(v), max(v), (SELECT max(version) FROM history('$kv')) FROM $kv" --format csv | tail -1)
  IFS=, read -r n lo hi version <<<"$answer"
  queries=$((queries + 1))
  if [ "$n" != 50 ] || [ "$lo" != "$hi" ] || [ "$version" -lt "$written" ]; then
    echo "     torn or stale: $answer (after version $written)"; torn=$((torn + 1))
  fi
  if [ "$queries" = 5 ]; then pkill -KILL -f "spool write $store" || true; fi
done
wait "$writers"
expect_equal "every query saw one whole commit ($queries queries)" "$torn" "0"
expect_equal "queries ran beside the writers" "$([ "$queries" -gt 0 ] && echo yes)" "yes"
check after-the-writers 0 "$spool" sql "$store" "SELECT count(*), min(v) = max(v) FROM $kv" --format csv
expect_output after-the-writers-whole "^50,1$"

echo "sql cli test: $failures failed"
[ "$failures" -eq 0 ]
