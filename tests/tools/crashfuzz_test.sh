#!/usr/bin/env bash
# spool-crashfuzz end to end: a short random campaign over every family, a
# split campaign merged, the replay of one case, and its refusals.
set -uo pipefail
source "$(dirname "$0")/cli_test_lib.sh" "$1"
crashfuzz=$spool

check "a campaign over every family" 0 "$crashfuzz" --random --seed 1 --cycles 4 --json "$work/a.json"
for family in log store pipeline rewind mixed; do expect_output "$family ran" "^$family/random campaign +[1-9]"; done
expect_output "no violation" "^0 violation\(s\)$"
check "the next seeds" 0 "$crashfuzz" --random --seed 5 --cycles 4 --families log,store --json "$work/b.json"
check "merged" 0 "$crashfuzz" merge "$work/a.json" "$work/b.json" --json "$work/merged.json"
expect_output "sums the log's cycles" "^log/random campaign +8 +8 "
expect_output "keeps the pipeline's" "^pipeline/random campaign +4 +4 "
check "flipped bits are counted" 0 "$crashfuzz" --random --seed 1 --cycles 100 --families log --json "$work/c.json"
expect_output "each caught" "^media faults injected: [1-9][0-9]*; detected [1-9].*detection 100.0%$"
faults=$(grep -o '"media_faults": [0-9]*' "$work/c.json" | head -1 | grep -o '[0-9]*$')
check "merged twice" 0 "$crashfuzz" merge "$work/c.json" "$work/c.json" --json "$work/cc.json"
if ! grep -q "\"media_faults\": $((faults * 2))," "$work/cc.json"; then
  echo "FAIL: merging does not sum the media faults ($faults each)"; failures=$((failures + 1))
fi
check "a blackbox campaign" 0 "$crashfuzz" --blackbox --cycles 12 --max-ops 60 --dir "$work/blackbox" --json "$work/bb.json"
expect_output "restarts and checks" "^blackbox: 12 restarts \(killed by the parent [0-9]+, at a kill point [0-9]+, clean exits [0-9]+\), [1-9][0-9]* commits acknowledged, [1-9][0-9]* retained versions read back$"
expect_output "kill points" "^kill points: "
expect_output "no violation" "^0 violation\(s\)$"
check "a blackbox campaign without a bound" 2 "$crashfuzz" --blackbox
check "replay one case" 0 "$crashfuzz" --replay "log truncate-and-retry call=81 mode=torn-512 seed=7 recovery-call=6"
expect_output "says what it ran" "replayed log truncate-and-retry call=81 mode=torn-512 seed=7 recovery-call=6: crash point reached"
check "a workload it does not know" 2 "$crashfuzz" --replay "log nope call=1 mode=power-loss seed=1"
expect_output "names it" "no workload 'nope' in family 'log'"
check "a bad mode" 2 "$crashfuzz" --replay "log single-commits call=1 mode=gentle seed=1"
check "no mode given" 2 "$crashfuzz"
check "random without a bound" 2 "$crashfuzz" --random
check "a bad duration" 2 "$crashfuzz" --random --duration soon
expect_output "names it" "^spool-crashfuzz: --duration: duration 'soon' must be a number and a unit"
check "a duration as a word" 0 "$crashfuzz" --random --duration "1 second" --families log --seed 3
expect_output "ran" "^log/random campaign +[1-9]"
echo '{"nope": 1}' >"$work/bad.json"
check "merging what is not a summary" 2 "$crashfuzz" merge "$work/bad.json"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all crashfuzz checks passed"
