#!/usr/bin/env bash
# End-to-end test of `spool verify` and `spool repair` as an operator uses
# them: an intact store verifies (exit 0); one flipped bit in the state's
# LMDB file makes reads fail with a Corruption that names `spool repair`
# (exit 1), never a wrong row; verify names the damaged file (exit 1);
# repair rebuilds the state from the snapshot and the log, and the rows,
# history and verify come back as they were. A store that is open
# elsewhere, or not a store, is refused (exit 2) and left alone.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"
store="$work/s"
users=main.a.users

damage() {  # damage FILE TEXT: TEXT's first letter upper-cased wherever TEXT is in FILE
  local offsets at
  offsets=$(grep -obUa -- "$2" "$1" | cut -d: -f1)
  [ -n "$offsets" ] || { echo "FAIL no $2 in $1"; failures=$((failures + 1)); return; }
  for at in $offsets; do
    printf '%s' "${2:0:1}" | tr a-z A-Z | dd of="$1" bs=1 seek="$at" conv=notrunc status=none
  done
}

check init 0 "$spool" init "$store"
check create 0 "$spool" table create "$store" "$users" --column id:int64 --column name:string:not_null --key id
for i in 1 2 3 4 5; do
  check "write-$i" 0 "$spool" write "$store" "$users" <<<"{\"id\": $i, \"name\": \"person-$i-marker\"}"
done
# A close leaves fewer than 64 commits and 64 KiB to the next open's replay
# rather than apply them to the state: one commit of 64 KiB makes it apply
# everything, so that the rows are in the state's file to damage below.
bulk=$(head -c 70000 /dev/zero | tr '\0' 'x')
check write-bulk 0 "$spool" write "$store" "$users" <<<"{\"id\": 100, \"name\": \"$bulk\"}"
check snapshot 0 "$spool" snapshot "$store"
check write-6 0 "$spool" write "$store" "$users" <<<'{"id": 6, "name": "person-6-marker"}'
"$spool" read "$store" "$users" --format csv >"$work/rows-before"
"$spool" history "$store" "$users" --json | grep -c '"version"' >"$work/history-before"

check verify-intact 0 "$spool" verify "$store"
expect_output verify-intact-lists-the-state '^state .* intact'
expect_output verify-intact-lists-the-snapshot '^snapshot .* intact'
expect_output verify-intact-summary '^intact: '
check verify-json 0 "$spool" verify "$store" --json
expect_output verify-json-intact '"intact": true'

damage "$(echo "$store"/state/gen-*/data.mdb)" "person-3-marker"
check read-damaged 1 "$spool" read "$store" "$users"
expect_output read-damaged-names-the-way-out 'Corruption: .*spool repair'
expect_no_output read-damaged-shows-no-row 'Person-3|person-1-marker'
check verify-damaged 1 "$spool" verify "$store"
expect_output verify-damaged-names-the-file '^state .*data\.mdb .*DAMAGED'
expect_output verify-damaged-says-what "damaged state: Corruption: .*row .* is damaged"
expect_output verify-damaged-summary "^DAMAGED: .*spool repair"

check repair 0 "$spool" repair "$store"
expect_output repair-says-from-what 'rebuilt from snapshot .* up to version 8'
expect_output repair-says-what-went 'removed .*data\.mdb'
check verify-repaired 0 "$spool" verify "$store"
"$spool" read "$store" "$users" --format csv >"$work/rows-after"
expect_equal repaired-rows "$(cat "$work/rows-after")" "$(cat "$work/rows-before")"
expect_equal repaired-history "$("$spool" history "$store" "$users" --json | grep -c '"version"')" "$(cat "$work/history-before")"
check write-after-repair 0 "$spool" write "$store" "$users" <<<'{"id": 7, "name": "person-7-marker"}'

check verify-not-a-store 2 "$spool" verify "$work/nothing"
check repair-not-a-store 2 "$spool" repair "$work/nothing"
# While another process has the store open (holds its lock), neither runs.
check verify-open-store 2 flock "$store/LOCK" "$spool" verify "$store"
expect_output verify-open-store-says-busy 'open in another process'
check repair-open-store 2 flock "$store/LOCK" "$spool" repair "$store"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
