# Helpers for the CLI test scripts, sourced first with the spool binary as
# the argument: it sets $spool, $work (a scratch directory removed on exit)
# and failures=0. Each helper prints "ok   NAME" or "FAIL NAME: …" and
# counts the failures.

spool=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

check() {  # check NAME EXPECTED_EXIT COMMAND... (stdin passes through; output in $work/out)
  local name=$1 expected=$2
  shift 2
  "$@" >"$work/out" 2>&1
  local got=$?
  if [ "$got" -ne "$expected" ]; then
    echo "FAIL $name: exit $got, expected $expected"; cat "$work/out"; failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
expect_output() {  # expect_output NAME PATTERN: $work/out has a line matching PATTERN
  if grep -qE -- "$2" "$work/out"; then echo "ok   $1"; else echo "FAIL $1: no /$2/ in:"; cat "$work/out"; failures=$((failures + 1)); fi
}
expect_no_output() {  # expect_no_output NAME PATTERN: no line of $work/out matches PATTERN
  if grep -qE -- "$2" "$work/out"; then echo "FAIL $1: /$2/ in:"; cat "$work/out"; failures=$((failures + 1)); else echo "ok   $1"; fi
}
expect_equal() {  # expect_equal NAME GOT WANTED
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: got '$2', wanted '$3'"; failures=$((failures + 1)); fi
}
