#!/usr/bin/env bash
# End-to-end test of `spool log …` as a user drives it: the demo on a kept
# directory, inspect, verify, dump (text and JSON), then a damaged byte that
# verify must report with exit code 1, and bad arguments with exit code 2.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"

check demo 0 "$spool" log demo --dir "$work/store" --commits 400 --seed 7
expect_output demo-survival "OK: no acknowledged commit was lost"
log="$work/store/log"
check inspect 0 "$spool" log inspect "$log"
expect_output inspect-epochs "^epoch +2"
check inspect-json 0 "$spool" log inspect "$log" --json
expect_output inspect-json-epoch '"epoch": 2'
check verify 0 "$spool" log verify "$log"
expect_output verify-intact "^intact: "
check dump 0 "$spool" log dump "$log" --from 3 --limit 2
expect_output dump-rows "^1 +4 "
check dump-json 0 "$spool" log dump "$log" --limit 1 --json
expect_output dump-json-version '"version":1'
check dump-archive 0 "$spool" log dump "$log" --archive epoch-000002 --limit 1 --json
expect_output dump-archive-epoch '"epoch":1'
check dump-archive-missing 2 "$spool" log dump "$log" --archive epoch-000099

# A store: init, events (none yet), and the errors a user can make.
check init 0 "$spool" init "$work/s"
check init-again 0 "$spool" init "$work/s"
check events-empty 0 "$spool" events "$work/s" --since 7d --level INFO --json
expect_output events-json-array '^\[\]$'
check events-bad-duration 2 "$spool" events "$work/s" --since 7x
expect_output events-bad-duration-says 'must be a number and a unit'
check events-bad-level 2 "$spool" events "$work/s" --level LOUD
check events-no-store 2 "$spool" events "$work/nowhere"
mkdir -p "$work/foreign" && touch "$work/foreign/notes.txt"
check init-foreign 2 "$spool" init "$work/foreign"
expect_output init-foreign-says 'not a Spool store; nothing was changed'

# Damage a byte inside the first record of the (sealed) first segment.
printf '\xff' | dd of="$log/000000000001.seg" bs=1 seek=150 conv=notrunc status=none
check verify-corrupt 1 "$spool" log verify "$log"
expect_output verify-names-segment "000000000001.seg offset"
check verify-missing 2 "$spool" log verify "$work/nowhere"
check inspect-missing 2 "$spool" log inspect "$work/nowhere"
expect_output inspect-missing-says "nowhere"
check archive-not-a-store 2 "$spool" archive "$work/foreign"
expect_output archive-not-a-store-says "not a Spool store"
check bad-arguments 2 "$spool" log dump
check unknown-command 2 "$spool" log frobnicate

echo "cli test: $failures failed"
[ "$failures" -eq 0 ]
