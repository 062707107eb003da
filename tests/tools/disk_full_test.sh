#!/usr/bin/env bash
# Disk-full tests on a small file system the test mounts (a tmpfs; where it
# cannot mount one, the test says so and is skipped). Every command either
# fully happens or changes nothing, says "no space" and where, and a retry
# does not duplicate: `spool topic produce --file` of more than fits
# produces nothing; one that stops part way says exactly what it stored
# and how to finish; `spool write --file` of more than fits writes no row;
# the store opens and verifies after each.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"
small="$work/small"
mkdir -p "$small"
if ! mount -t tmpfs -o size=3m tmpfs "$small" 2>"$work/mount.err"; then
  echo "SKIP: cannot mount a tmpfs here ($(cat "$work/mount.err")): the disk-full tests need root and mount"
  exit 77
fi
trap 'umount "$small" 2>/dev/null; rm -rf "$work"' EXIT

# Messages of 1 KiB, one a line.
lines() {  # lines COUNT PREFIX
  local i pad
  pad=$(printf '%*s' 1000 '' | tr ' ' m)
  for i in $(seq 1 "$1"); do echo "$2-$i-$pad"; done
}

topic="$small/topic"
check topic-create 0 "$spool" topic create "$topic"
lines 5000 big >"$work/big.txt"  # 5 MB: more than the file system holds
check produce-too-much 2 "$spool" topic produce "$topic" --file "$work/big.txt"
expect_output produce-too-much-says-no-space "NoSpace: no space left on the file system of .*small/topic.*nothing was produced"
"$spool" topic info "$topic" --json >"$work/out"
expect_output produce-too-much-stored-nothing '"messages": 0'

lines 300 small >"$work/small.txt"
check produce-what-fits 0 "$spool" topic produce "$topic" --file "$work/small.txt"
check produce-rest-skipped 2 "$spool" topic produce "$topic" --file "$work/small.txt" --skip 300
expect_output skip-everything-is-refused "only 300 message"
check produce-skip-some 0 "$spool" topic produce "$topic" --file "$work/small.txt" --skip 250
"$spool" topic consume "$topic" --json >"$work/out"
expect_equal produce-skip-adds-only-the-rest "$(grep -c '"value"' "$work/out")" "350"
expect_equal produce-skip-adds-the-last-ones "$(grep -c 'small-300-' "$work/out")" "2"
expect_equal produce-skip-adds-no-earlier-one "$(grep -c 'small-250-' "$work/out")" "1"
rm -rf "$topic"

store="$small/store"
check init 0 "$spool" init "$store"
check create 0 "$spool" table create "$store" main.a.t --column id:int64 --column v:string --key id
# 4 MB of rows that do not compress: more than the file system holds.
head -c 3000000 /dev/urandom | base64 -w 100 | awk '{ printf "{\"id\": %d, \"v\": \"%s\"}\n", NR, $0 }' >"$work/rows.jsonl"
check write-too-much 2 "$spool" write "$store" main.a.t --file "$work/rows.jsonl"
expect_output write-too-much-says-no-space-and-where "NoSpace: write .*small/store/log/.*No space left on device; nothing was changed"
check read-after 0 "$spool" read "$store" main.a.t --format csv
expect_equal write-too-much-wrote-no-row "$(wc -l <"$work/out")" "1"
check write-what-fits 0 "$spool" write "$store" main.a.t <<<'{"id": 1, "v": "one"}'
check read-what-fits 0 "$spool" read "$store" main.a.t --format csv
expect_equal one-row "$(tail -n +2 "$work/out")" "1,one"
check verify-after 0 "$spool" verify "$store"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
