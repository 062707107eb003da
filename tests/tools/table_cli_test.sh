#!/usr/bin/env bash
# End-to-end test of the table commands as a user drives them: create a keyed
# and a keyless table, write JSON lines and CSV (from files and stdin), read
# now and as of a version and a timestamp, history, the change feed (with an
# update's pre- and post-image), delete by key, alter, restore, snapshots,
# vacuum, drop. Then every mistake a user can make with each command: each
# must exit 2, say what is wrong (the line, the column, the range), and
# leave the store exactly as it was (same tables, rows, history and log).
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"
store="$work/s"
items=main.shop.items
events=main.shop.events

state_known=0  # 1: $work/after holds the store's fingerprint (nothing ran since)
check() {  # check NAME EXPECTED_EXIT COMMAND... (stdin passes through)
  local name=$1 expected=$2
  state_known=0
  shift 2
  "$@" >"$work/out" 2>&1
  local got=$?
  if [ "$got" -ne "$expected" ]; then
    echo "FAIL $name: exit $got, expected $expected"; cat "$work/out"; failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
expect_output() {  # expect_output NAME PATTERN
  if grep -qE -- "$2" "$work/out"; then echo "ok   $1"; else echo "FAIL $1: no /$2/ in:"; cat "$work/out"; failures=$((failures + 1)); fi
}
expect_no_output() {  # expect_no_output NAME PATTERN
  if grep -qE -- "$2" "$work/out"; then echo "FAIL $1: /$2/ in:"; cat "$work/out"; failures=$((failures + 1)); else echo "ok   $1"; fi
}
expect_exactly() {  # expect_exactly NAME FILE: the output is FILE's text
  if diff -u "$2" "$work/out" >"$work/diff"; then echo "ok   $1"; else echo "FAIL $1:"; cat "$work/diff"; failures=$((failures + 1)); fi
}
expect_equal() {  # expect_equal NAME GOT WANTED
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: got '$2', wanted '$3'"; failures=$((failures + 1)); fi
}

# Everything a refused command must leave as it was: the catalog, every
# table's rows and history, and the newest version of the log.
fingerprint() {
  "$spool" table list "$store" --json
  for t in $("$spool" table list "$store" --json | sed -n 's/^    "name": "\(.*\)",$/\1/p'); do
    "$spool" read "$store" "$t" --format csv
    "$spool" history "$store" "$t" --json | grep -c '"version"'
  done
  "$spool" log inspect "$store/log" --json | grep -A2 '"newest"'
}
refused() {  # refused NAME PATTERN COMMAND...: exit 2, says PATTERN, changes nothing
  local name=$1 pattern=$2
  shift 2
  if [ "$state_known" -eq 1 ]; then cp "$work/after" "$work/before"; else fingerprint >"$work/before" 2>&1 </dev/null; fi
  check "$name" 2 "$@"
  expect_output "$name-says" "$pattern"
  fingerprint >"$work/after" 2>&1 </dev/null
  if cmp -s "$work/before" "$work/after"; then
    echo "ok   $name-changed-nothing"
    state_known=1
  else
    echo "FAIL $name-changed-nothing:"; diff -u "$work/before" "$work/after"; failures=$((failures + 1))
  fi
}
history_length() { "$spool" history "$store" "$1" --json | grep -c '"version"'; }
# The commit timestamp of version $2 of table $1, from its history.
timestamp_of() {
  "$spool" history "$store" "$1" --json | awk -v v="\"version\": $2," '$1 " " $2 == v { getline; gsub(/.*"timestamp": "|",$/, ""); print }'
}

# --- Tables -----------------------------------------------------------------
check init 0 "$spool" init "$store"
check create-keyed 0 "$spool" table create "$store" "$items" --column id:int64 --column name:string:not_null \
  --column price:double --column added:timestamp --column tag:bytes --column avail:bool --key id \
  --property pipelines.reset.allowed=false
expect_output create-keyed-version "^created main.shop.items at version 1$"
check create-keyless 0 "$spool" table create "$store" "$events" --column msg:string:not_null --column n:int64 \
  --kind materialized_view
expect_output create-keyless-version "at version 2$"
check list 0 "$spool" table list "$store"
expect_output list-keyed "^main.shop.items +streaming_table +id int64 not null, name string not null, price double, added timestamp, tag bytes, avail bool +id +pipelines.reset.allowed=false +1$"
expect_output list-keyless "^main.shop.events +materialized_view +msg string not null, n int64 +2$"
check list-json 0 "$spool" table list "$store" --json
expect_output list-json-created '"created_version": 2'

# --- Writes -----------------------------------------------------------------
cat >"$work/items.jsonl" <<'EOF'
{"id":1,"name":"apple","price":0.5,"added":"2024-03-01 09:30:00","tag":"YQ==","avail":true}
{"id":2,"name":"pear, green","price":1.25,"added":1709285400000000}
EOF
check write-jsonl-file 0 "$spool" write "$store" "$items" --file "$work/items.jsonl"
expect_output write-jsonl-file-says "^wrote 2 row\(s\) to main.shop.items at version 3$"
check write-csv-stdin 0 "$spool" write "$store" "$items" --format csv <<'EOF'
id,name,price,avail
2,"pear, green",2.5,false
3,"say ""hi""",,TRUE
EOF
expect_output write-csv-stdin-says "at version 4$"
check write-jsonl-stdin 0 "$spool" write "$store" "$events" <<'EOF'
{"msg":"started","n":1}

{"msg":"line\nbreak"}
EOF
printf 'n,msg\r\n3,"multi\nline"\r\n' >"$work/events.csv"
check write-csv-file 0 "$spool" write "$store" "$events" --file "$work/events.csv"
expect_output write-csv-file-says "^wrote 1 row\(s\) to main.shop.events at version 6$"

# --- Reads, now and then ----------------------------------------------------
cat >"$work/items-v4.csv" <<'EOF'
id,name,price,added,tag,avail
1,apple,0.5,2024-03-01 09:30:00.000000,YQ==,true
2,"pear, green",2.5,,,false
3,"say ""hi""",,,,true
EOF
cat >"$work/items-v3.csv" <<'EOF'
id,name,price,added,tag,avail
1,apple,0.5,2024-03-01 09:30:00.000000,YQ==,true
2,"pear, green",1.25,2024-03-01 09:30:00.000000,,
EOF
check read-current 0 "$spool" read "$store" "$items" --format csv
expect_exactly read-current-rows "$work/items-v4.csv"
check read-version 0 "$spool" read "$store" "$items" --format csv --version 3
expect_exactly read-version-rows "$work/items-v3.csv"
ts3=$(timestamp_of "$items" 3)
check read-timestamp 0 "$spool" read "$store" "$items" --format csv --timestamp "$ts3"
expect_exactly read-timestamp-rows "$work/items-v3.csv"
check read-timestamp-future 0 "$spool" read "$store" "$items" --format csv --timestamp "2999-01-01 00:00:00"
expect_exactly read-timestamp-future-rows "$work/items-v4.csv"
check read-before-created 0 "$spool" read "$store" "$items" --format csv --version 2
expect_output read-before-created-header "^id,name,price,added,tag,avail$"
check read-json 0 "$spool" read "$store" "$items" --format json --limit 2
expect_output read-json-row '^\{"id":1,"name":"apple","price":0.5,"added":"2024-03-01 09:30:00.000000","tag":"YQ==","avail":true\}$'
expect_output read-json-null '^\{"id":2,"name":"pear, green","price":2.5,"added":null,"tag":null,"avail":false\}$'
expect_no_output read-json-limit '"id":3'
check read-table 0 "$spool" read "$store" "$items"
expect_output read-table-row '^3 +say "hi" +NULL +NULL +NULL +true$'
expect_output read-table-footer '^\(3 row\(s\) of main.shop.items at version 6\)$'
cat >"$work/events-v6.csv" <<'EOF'
msg,n
started,1
"line
break",
"multi
line",3
EOF
check read-keyless 0 "$spool" read "$store" "$events" --format csv
expect_exactly read-keyless-rows "$work/events-v6.csv"

# --- History and the change feed ---------------------------------------------
check history 0 "$spool" history "$store" "$items"
expect_output history-header "^version +timestamp \(UTC\) +operation +operationParameters +operationMetrics +updateId"
expect_output history-update "^4 .* WRITE .*numInsertedRows=1 .*numUpdatedRows=1"
expect_output history-create "^1 .* CREATE TABLE "
expect_no_output history-other-table "^[256] "
expect_equal history-length "$(history_length "$items")" 3
check history-limit 0 "$spool" history "$store" "$items" --limit 1 --json
expect_output history-json-params '"mode": "Upsert"'
expect_output history-json-metrics '"numUpdatedRows": 1'
expect_output history-json-update-id '"updateId": ""'
expect_no_output history-json-limit '"version": 3'
cat >"$work/changes.csv" <<'EOF'
id,name,price,added,tag,avail,_change_type,_commit_version
1,apple,0.5,2024-03-01 09:30:00.000000,YQ==,true,insert,3
2,"pear, green",1.25,2024-03-01 09:30:00.000000,,,insert,3
2,"pear, green",1.25,2024-03-01 09:30:00.000000,,,update_preimage,4
2,"pear, green",2.5,,,false,update_postimage,4
3,"say ""hi""",,,,true,insert,4
EOF
"$spool" changes "$store" "$items" --from 3 --to 4 --format csv >"$work/changes-got.csv" 2>&1
sed 's/,[^,]*$//' "$work/changes-got.csv" >"$work/out"
expect_exactly changes-rows "$work/changes.csv"
expect_equal changes-commit-timestamp "$(sed -n 2p "$work/changes-got.csv" | sed 's/.*,//')" "$ts3"
check changes-json 0 "$spool" changes "$store" "$items" --from 4 --format json
expect_output changes-json-post '"price":2.5,.*"_change_type":"update_postimage","_commit_version":4'
check changes-table 0 "$spool" changes "$store" "$items" --from 4
expect_output changes-table-header "_change_type +_commit_version +_commit_timestamp"

# --- Delete by key, alter ------------------------------------------------------
check delete 0 "$spool" write "$store" "$items" --delete <<<'{"id":1,"name":"ignored"}'
expect_output delete-says "^deleted 1 row\(s\) \(1 key\(s\) given\) from main.shop.items at version 7$"
fingerprint >"$work/before" 2>&1 </dev/null
check delete-absent-keys 0 "$spool" write "$store" "$items" --delete <<'EOF'
{"id":1}
{"id":42}
EOF
expect_output delete-absent-keys-says "^none of the 2 key\(s\) matches a row of main.shop.items: nothing was written$"
fingerprint >"$work/after" 2>&1 </dev/null
expect_equal delete-absent-keys-changed-nothing "$(cmp -s "$work/before" "$work/after" && echo same)" same
check read-after-delete 0 "$spool" read "$store" "$items" --format csv
expect_no_output read-after-delete-gone '^1,'
check history-delete 0 "$spool" history "$store" "$items" --limit 1
expect_output history-delete-op "^7 .* DELETE .*numDeletedRows=1"
check alter-add 0 "$spool" table alter "$store" "$items" --add-column note:string --set-property owner=ops
expect_output alter-add-says "ALTER TABLE\) at version 8$"
check alter-unset 0 "$spool" table alter "$store" "$items" --unset-property owner
expect_output alter-unset-says "UNSET TBLPROPERTIES\) at version 9$"
check list-after-alter 0 "$spool" table list "$store"
expect_output list-after-alter-column "avail bool, note string +id +pipelines.reset.allowed=false +1$"
check write-new-column 0 "$spool" write "$store" "$items" <<<'{"id":4,"name":"kiwi","note":"new"}'
check read-new-column 0 "$spool" read "$store" "$items" --format csv
expect_output read-new-column-old-row '^2,"pear, green",2.5,,,false,$'
expect_output read-new-column-new-row '^4,kiwi,,,,,new$'

# --- Restore ------------------------------------------------------------------
check restore 0 "$spool" restore "$store" "$items" --version 4
expect_output restore-says "^restored main.shop.items to version 4 as version 11: numRestoredRows=1 numRemovedRows=1$"
sed 's/$/,/; 1s/,$/,note/' "$work/items-v4.csv" >"$work/items-restored.csv"
check read-restored 0 "$spool" read "$store" "$items" --format csv
expect_exactly read-restored-rows "$work/items-restored.csv"
check history-restore 0 "$spool" history "$store" "$items" --limit 1 --json
expect_output history-restore-op '"operation": "RESTORE"'
expect_output history-restore-param '"version": 4'

# --- Snapshots and vacuum --------------------------------------------------------
check snapshot 0 "$spool" snapshot "$store"
expect_output snapshot-says "^snapshot snap-[0-9-]+\.spsnap at version 11: .*bytes\)$"
old_snapshot=$(sed -n 's/^snapshot \(snap-[0-9-]*\.spsnap\) .*/\1/p' "$work/out")
check write-more-1 0 "$spool" write "$store" "$events" <<<'{"msg":"more"}'
check write-more-2 0 "$spool" write "$store" "$events" <<<'{"msg":"still more"}'
check snapshot-again 0 "$spool" snapshot "$store" --json
expect_output snapshot-again-version '"version": 13'
check snapshot-list 0 "$spool" snapshot "$store" --list
expect_output snapshot-list-old "^$old_snapshot +1 +11 "
expect_output snapshot-list-new " +1 +13 "
check vacuum-dry-run 0 "$spool" vacuum "$store" --dry-run
expect_output vacuum-dry-run-says "^would delete 0 file\(s\), 0 bytes"
expect_output vacuum-dry-run-floor "^floor version 1 \(held by retention\)$"
refused vacuum-below-minimum "below the safety minimum of 168h" "$spool" vacuum "$store" --retain 1h
check vacuum-forced-dry-run 0 "$spool" vacuum "$store" --retain 0s --force --dry-run
expect_output vacuum-forced-dry-run-lists "^would delete 1 file\(s\), [1-9][0-9,]* bytes .*1 snapshot\(s\)"
expect_output vacuum-forced-dry-run-path "snapshots/$old_snapshot$"
expect_output vacuum-forced-dry-run-floor "^floor version 13 \(held by retention\)$"
check snapshot-list-after-dry-run 0 "$spool" snapshot "$store" --list
expect_output dry-run-kept-snapshot "^$old_snapshot "
check vacuum 0 "$spool" vacuum "$store" --retain 0s --force
expect_output vacuum-says "^deleted 1 file\(s\)"
check snapshot-list-after-vacuum 0 "$spool" snapshot "$store" --list
expect_no_output vacuum-removed-snapshot "$old_snapshot"
check events-vacuum 0 "$spool" events "$store" --type vacuum --json
expect_output events-vacuum-row '"floor_version": 13'

# --- Bad input: every command exits 2, says why and changes nothing ------------------
# table create
refused create-bad-type "column 'qty': unknown column type 'integer'" \
  "$spool" table create "$store" main.shop.x --column qty:integer
refused create-bad-flag "the only flag after the type is not_null" \
  "$spool" table create "$store" main.shop.x --column qty:int64:required
refused create-exists "table main.shop.items: already exists" \
  "$spool" table create "$store" "$items" --column a:int64
refused create-bad-name "must have the form catalog.schema.table" "$spool" table create "$store" items --column a:int64
refused create-bad-key "primary key column 'b' is not a column" \
  "$spool" table create "$store" main.shop.x --column a:int64 --key b
refused create-bad-kind "unknown table kind 'view'" "$spool" table create "$store" main.shop.x --column a:int64 --kind view
refused create-bad-property "must be KEY=VALUE" "$spool" table create "$store" main.shop.x --column a:int64 --property k
# table alter, drop, list
refused alter-unknown-table "table main.shop.nope does not exist" \
  "$spool" table alter "$store" main.shop.nope --add-column a:int64
refused alter-not-null "added column 'z' must be nullable" "$spool" table alter "$store" "$items" --add-column z:int64:not_null
refused alter-existing-column "column 'name' appears twice" "$spool" table alter "$store" "$items" --add-column name:string
refused alter-unset-missing "has no property 'nope'" "$spool" table alter "$store" "$items" --unset-property nope
refused alter-nothing "nothing to alter" "$spool" table alter "$store" "$items"
refused drop-unknown "table main.shop.nope does not exist" "$spool" table drop "$store" main.shop.nope
mkdir -p "$work/empty"
refused list-not-a-store "is not a Spool store; create one with .spool init" "$spool" table list "$work/empty"
# write: every error names the line and the field; earlier good lines are not written
refused write-unknown-table "table main.shop.nope does not exist" "$spool" write "$store" main.shop.nope <<<'{"id":9,"name":"x"}'
refused write-endless-line "/dev/zero line 1 is longer than 16 MiB" "$spool" write "$store" "$items" --file /dev/zero
refused write-malformed-json "^spool: InvalidArgument: stdin line 3: malformed JSON: .*nothing was written" \
  "$spool" write "$store" "$items" <<'EOF'
{"id":9,"name":"good"}

{"id":10,"name":"bad"
EOF
refused write-wrong-type "stdin line 2: column 'price': expected a number .*got \"cheap\"" \
  "$spool" write "$store" "$items" <<'EOF'
{"id":9,"name":"good"}
{"id":10,"name":"bad","price":"cheap"}
EOF
refused write-float-for-int "line 1: column 'id': expected an int64, got 1.5" "$spool" write "$store" "$items" <<<'{"id":1.5,"name":"x"}'
refused write-unknown-column "stdin line 2: unknown column 'colour' \(the table has: id, name, price" \
  "$spool" write "$store" "$items" <<'EOF'
{"id":9,"name":"good"}
{"id":10,"name":"bad","colour":"red"}
EOF
refused write-missing-not-null "line 2: column 'name' is missing and must not be null" \
  "$spool" write "$store" "$items" <<'EOF'
{"id":9,"name":"good"}
{"id":10}
EOF
refused write-null-not-null "line 1: column 'msg': must not be null" "$spool" write "$store" "$events" <<<'{"msg":null}'
refused write-bad-timestamp "line 1: column 'added': timestamp '2024-02-30 10:00:00' must be" \
  "$spool" write "$store" "$items" <<<'{"id":9,"name":"x","added":"2024-02-30 10:00:00"}'
refused write-bad-base64 "line 1: column 'tag': expected base64" "$spool" write "$store" "$items" <<<'{"id":9,"name":"x","tag":"a"}'
printf 'id,name\n9,good\n10,bad,extra\n' >"$work/bad-count.csv"
refused write-csv-field-count "bad-count.csv line 3: 3 field\(s\), but the header has 2" \
  "$spool" write "$store" "$items" --file "$work/bad-count.csv"
refused write-csv-bad-value "stdin line 3: column 'avail': expected true or false, got 'maybe'" \
  "$spool" write "$store" "$items" --format csv <<'EOF'
id,name,avail
9,good,true
10,bad,maybe
EOF
refused write-csv-unknown-header "stdin line 1: header: unknown column 'colour'" \
  "$spool" write "$store" "$items" --format csv <<<'id,name,colour'
refused write-csv-missing-header "stdin line 1: header: column 'name' is missing and must not be null" \
  "$spool" write "$store" "$items" --format csv <<<'id,price'
refused write-csv-unclosed-quote "stdin line 3: malformed CSV: a quoted field is never closed" \
  "$spool" write "$store" "$items" --format csv <<'EOF'
id,name
9,good
10,"bad
11,worse
EOF
refused write-csv-null-key "line 2: column 'id': must not be null" "$spool" write "$store" "$items" --format csv <<'EOF'
id,name
,nameless
EOF
refused write-delete-keyless "has no primary key: --delete needs a keyed table" \
  "$spool" write "$store" "$events" --delete <<<'{"msg":"started"}'
refused write-delete-no-key "line 1: column 'id' is missing" "$spool" write "$store" "$items" --delete <<<'{"name":"pear, green"}'
refused write-missing-file "cannot open $work/nowhere.jsonl" "$spool" write "$store" "$items" --file "$work/nowhere.jsonl"
refused write-bad-format "" "$spool" write "$store" "$items" --format xml <<<'{"id":9,"name":"x"}'
# read
refused read-unknown-table "table main.shop.nope does not exist" "$spool" read "$store" main.shop.nope
refused read-version-too-new "version 99 is not available: versions 1 .* to 13 .* are" "$spool" read "$store" "$items" --version 99
refused read-version-zero "version 0 is not available: versions 1 .* to 13 .* are" "$spool" read "$store" "$items" --version 0
refused read-timestamp-too-old "before the oldest available commit: version 1 at " \
  "$spool" read "$store" "$items" --timestamp "2000-01-01 00:00:00"
refused read-timestamp-malformed "timestamp 'last tuesday' must be 'yyyy-MM-dd HH:mm:ss" \
  "$spool" read "$store" "$items" --timestamp "last tuesday"
refused read-version-and-timestamp "excludes" "$spool" read "$store" "$items" --version 3 --timestamp "$ts3"
refused read-bad-format "" "$spool" read "$store" "$items" --format xml
refused read-before-table "table main.shop.events does not exist at version 1" "$spool" read "$store" "$events" --version 1
# history, changes, restore
refused history-unknown-table "table main.shop.nope does not exist" "$spool" history "$store" main.shop.nope
refused changes-out-of-range "version 99 is not available: versions 1 .* to 13 .* are" "$spool" changes "$store" "$items" --from 99
refused changes-to-out-of-range "version 99 is not available: versions 1 .* to 13 .* are" \
  "$spool" changes "$store" "$items" --from 3 --to 99
refused changes-unknown-table "main.shop.nope does not exist" "$spool" changes "$store" main.shop.nope --from 1
refused changes-no-from "from is required" "$spool" changes "$store" "$items"
refused restore-out-of-range "version 99 is not available: versions 1 .* to 13 .* are" \
  "$spool" restore "$store" "$items" --version 99
refused restore-unknown-table "main.shop.nope does not exist" "$spool" restore "$store" main.shop.nope --version 3
# snapshot, vacuum, a store in use
check init-empty 0 "$spool" init "$work/fresh"
check snapshot-empty-store 2 "$spool" snapshot "$work/fresh"
expect_output snapshot-empty-store-says "no commits to snapshot"
refused snapshot-not-a-store "is not a Spool store" "$spool" snapshot "$work/empty"
refused vacuum-bad-duration "duration '7 fortnights' must be a number and a unit" "$spool" vacuum "$store" --retain "7 fortnights"
refused store-busy "store .* is open in another process or handle; another spool command" \
  flock "$store/LOCK" "$spool" write "$store" "$items" <<<'{"id":9,"name":"x"}'

# --- Drop: gone now, still there as of an older version --------------------------
check drop 0 "$spool" table drop "$store" "$events"
expect_output drop-says "^dropped main.shop.events at version 14$"
check read-dropped 2 "$spool" read "$store" "$events"
expect_output read-dropped-says "does not exist"
check read-dropped-as-of 0 "$spool" read "$store" "$events" --format csv --version 6
expect_exactly read-dropped-as-of-rows "$work/events-v6.csv"
check list-after-drop 0 "$spool" table list "$store"
expect_no_output list-after-drop-gone "main.shop.events"

echo "table cli test: $failures failed"
[ "$failures" -eq 0 ]
