#!/usr/bin/env bash
# End-to-end test of `spool topic` as a user drives it: create, produce from
# arguments and from stdin (binary bytes included), consume as a table and
# as JSON lines from any offset, info, and retention by size that deletes
# whole segments so that old offsets are no longer retained. Then every
# mistake a user can make with each subcommand: each must exit 2, say what
# is wrong, and leave the topic exactly as it was.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"
topic="$work/orders"


json_field() {  # json_field DIR FIELD: a number from `topic info --json`
  "$spool" topic info "$1" --json | sed -n "s/^  \"$2\": \([0-9]*\),\?$/\1/p"
}
# Everything a refused command must leave as it was: the settings, the
# offsets and every retained message.
fingerprint() {
  "$spool" topic info "$1" --json
  "$spool" topic consume "$1" --json
}
refused() {  # refused NAME PATTERN DIR COMMAND...: exit 2, says PATTERN, changes nothing in DIR
  local name=$1 pattern=$2 dir=$3
  shift 3
  fingerprint "$dir" >"$work/before" 2>&1 </dev/null
  check "$name" 2 "$@"
  expect_output "$name-says" "$pattern"
  fingerprint "$dir" >"$work/after" 2>&1 </dev/null
  if cmp -s "$work/before" "$work/after"; then
    echo "ok   $name-changed-nothing"
  else
    echo "FAIL $name-changed-nothing:"; diff -u "$work/before" "$work/after"; failures=$((failures + 1))
  fi
}

# --- A topic, produced to and consumed ----------------------------------------
check create 0 "$spool" topic create "$topic"
expect_output create-says "^created topic $topic \(retention: age 7d, size unlimited; segments of 8.0 MiB\)$"
check produce-args 0 "$spool" topic produce "$topic" --key user-1 "first order" "second order" ""
expect_output produce-args-offsets "^produced 3 message\(s\) at offsets 0..2$"
check produce-stdin 0 "$spool" topic produce "$topic" < <(printf 'line one\nline two\r\n\xff\xfe bytes\n')
expect_output produce-stdin-offsets "^produced 3 message\(s\) at offsets 3..5$"

check consume-table 0 "$spool" topic consume "$topic"
expect_output consume-table-keyed "^0 +[0-9-]+ [0-9:.]+ +user-1 +first order$"
expect_output consume-table-empty-value "^2 +[0-9-]+ [0-9:.]+ +user-1 *$"
expect_output consume-table-crlf-stripped "^4 +[0-9-]+ [0-9:.]+ +line two$"
expect_output consume-table-binary-escaped '^5 .*\\xff\\xfe bytes$'
expect_output consume-table-summary "^\(6 message\(s\) from offset 0; next offset 6\)$"

check consume-json 0 "$spool" topic consume "$topic" --json --from 1 --max 5
expect_equal consume-json-lines "$(wc -l <"$work/out")" 5
expect_output consume-json-first '^\{"offset":1,"timestamp":"[0-9-]+ [0-9:.]+","timestamp_us":[0-9]+,"key":"user-1","value":"second order"\}$'
expect_output consume-json-binary-base64 '^\{"offset":5,.*"key":"","value_base64":"//4gYnl0ZXM="\}$'
check consume-middle 0 "$spool" topic consume "$topic" --json --from 4 --max 1
expect_output consume-middle-one '^\{"offset":4,.*"value":"line two"\}$'
expect_equal consume-middle-only-one "$(wc -l <"$work/out")" 1
check consume-at-end 0 "$spool" topic consume "$topic" --from 6
expect_output consume-at-end-empty "^\(0 message\(s\) from offset 6; next offset 6\)$"

check info 0 "$spool" topic info "$topic"
expect_output info-offsets "^offsets +0 .. 5 \(next 6\)$"
expect_output info-messages "^messages +6$"
expect_output info-retention "^retention +age 7d, size unlimited$"
expect_equal info-json-next "$(json_field "$topic" next_offset)" 6
expect_equal info-json-retention "$(json_field "$topic" retention_age_us)" 604800000000

check retention-nothing 0 "$spool" topic retention "$topic"
expect_output retention-nothing-says "^nothing to delete; oldest retained offset 0$"
check retention-json 0 "$spool" topic retention "$topic" --json
expect_output retention-json-says '"segments_deleted": 0'
expect_output retention-json-offset '"oldest_offset": 0'

# stdin goes in durable batches of at most 10,000 lines
check create-many 0 "$spool" topic create "$work/many"
check produce-many 0 "$spool" topic produce "$work/many" < <(seq 1 10001)
expect_output produce-many-first-batch "^produced 10000 message\(s\) at offsets 0..9999$"
expect_output produce-many-second-batch "^produced 1 message\(s\) at offsets 10000..10000$"
check consume-many-last 0 "$spool" topic consume "$work/many" --json --from 9999
expect_output consume-many-across-batches '^\{"offset":10000,.*"value":"10001"\}$'

# --- Retention by size: whole segments go, offsets stay -----------------------
small="$work/small"
check create-small 0 "$spool" topic create "$small" --retention 1d --retention-bytes 131072 --segment-bytes 65536
expect_output create-small-says "retention: age 1d, size 128.0 KiB; segments of 64.0 KiB"
produced=0
for i in $(seq 1 12); do  # 12 batches of ~32 KiB that compress little: several segments
  head -c 24000 /dev/urandom | base64 -w 100 >"$work/batch"
  produced=$((produced + $(wc -l <"$work/batch")))
  "$spool" topic produce "$small" <"$work/batch" >"$work/out" 2>&1 ||
    { echo "FAIL produce-small-$i"; cat "$work/out"; failures=$((failures + 1)); }
done
oldest=$(json_field "$small" oldest_offset)
next=$(json_field "$small" next_offset)
if [ "${oldest:-0}" -gt 0 ]; then echo "ok   produce-applied-retention (oldest $oldest)"; else
  echo "FAIL produce-applied-retention: oldest offset '${oldest}'"; failures=$((failures + 1)); fi
expect_equal retention-keeps-next "$next" "$produced"
check retention-tighter 0 "$spool" topic retention "$small" --retention-bytes 65536
expect_output retention-tighter-settings "^retention now: age 1d, size 64.0 KiB$"
expect_output retention-tighter-deleted "^deleted [0-9]+ segment\(s\): [0-9,]+ message\(s\), [0-9.]+ KiB; oldest retained offset now [0-9]+$"
new_oldest=$(json_field "$small" oldest_offset)
if [ "$new_oldest" -gt "$oldest" ]; then echo "ok   retention-moved-oldest ($oldest -> $new_oldest)"; else
  echo "FAIL retention-moved-oldest: $oldest -> $new_oldest"; failures=$((failures + 1)); fi
expect_equal retention-kept-next "$(json_field "$small" next_offset)" "$next"
check consume-oldest 0 "$spool" topic consume "$small" --json --from "$new_oldest" --max 1
expect_output consume-oldest-offset "^\{\"offset\":$new_oldest,"

# --- Mistakes -----------------------------------------------------------------
refused consume-below-oldest "^spool: OutOfRange: topic $small: offset 0 is no longer retained \(oldest retained offset: $new_oldest\)$" \
  "$small" "$spool" topic consume "$small" --from 0
refused consume-beyond-end "^spool: InvalidArgument: topic $topic: offset 7 is past the end \(next offset: 6\)$" \
  "$topic" "$spool" topic consume "$topic" --from 7
refused consume-bad-offset "^--from: '-1' is not a whole number \(0 or more\)$" "$topic" "$spool" topic consume "$topic" --from -1
refused create-existing "^spool: InvalidArgument: topic $topic already exists$" "$topic" "$spool" topic create "$topic"
refused create-bad-duration "duration '7x' must be a number and a unit" "$topic" "$spool" topic create "$work/new" --retention 7x
refused create-bad-segment-size "segment size 1000 must be between 65536 and 1073741824 bytes" "$topic" \
  "$spool" topic create "$work/new" --segment-bytes 1000
[ ! -e "$work/new" ] && echo "ok   refused-create-left-no-directory" || { echo "FAIL refused-create-left-no-directory"; failures=$((failures + 1)); }
mkdir "$work/other" && echo notes >"$work/other/notes.txt"
refused create-in-other-files "holds other files \(notes.txt\)" "$topic" "$spool" topic create "$work/other"
refused create-no-parent "cannot create topic $work/missing/t" "$topic" "$spool" topic create "$work/missing/t"
refused produce-unknown-dir "^spool: NotFound: $work/nope is not a topic .*; create one with \`spool topic create $work/nope\`$" \
  "$topic" "$spool" topic produce "$work/nope" hello
refused produce-nothing "no messages: give them as arguments, in --file or one a line on stdin" "$topic" \
  "$spool" topic produce "$topic" </dev/null
refused produce-file-and-arguments "give the messages as arguments or in --file, not both" "$topic" \
  "$spool" topic produce "$topic" --file "$work/other/notes.txt" hello
refused produce-missing-file "cannot read $work/none.jsonl" "$topic" "$spool" topic produce "$topic" --file "$work/none.jsonl"
refused produce-endless-line "/dev/zero line 1 is longer than 16 MiB: nothing was produced" "$topic" \
  "$spool" topic produce "$topic" --file /dev/zero
refused consume-unknown-dir "is not a topic" "$topic" "$spool" topic consume "$work/nope"
refused info-unknown-dir "is not a topic" "$topic" "$spool" topic info "$work/nope"
refused retention-unknown-dir "is not a topic" "$topic" "$spool" topic retention "$work/nope"
refused retention-bad-duration "duration 'soon' must be a number and a unit" "$small" \
  "$spool" topic retention "$small" --retention soon
refused no-subcommand "subcommand" "$topic" "$spool" topic

echo "topic cli test: $failures failed"
[ "$failures" -eq 0 ]
