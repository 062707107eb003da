#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs a tiny
# consumer against it twice: with find_package(Spool CONFIG) and with
# pkg-config; then the programs of examples/.
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/consumer" -B "$work/consumer-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer-build" >/dev/null
"$work/consumer-build/consumer" "$work/log-cmake"

export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig:$work/prefix/lib/x86_64-linux-gnu/pkgconfig"
# shellcheck disable=SC2046
c++ -o "$work/consumer-pc" "$source_dir/consumer/main.cc" $(pkg-config --cflags --libs --static spool)
"$work/consumer-pc" "$work/log-pc"
# The examples an embedder starts from, built and run the same way.
cmake -S "$source_dir/../../examples" -B "$work/examples-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/examples-build" >/dev/null
"$work/examples-build/time_travel" "$work/example-time-travel"
"$work/examples-build/pipeline_rewind" "$work/example-pipeline-rewind"
"$work/examples-build/sql_query" "$work/example-sql-query" >"$work/sql.out"
grep -q "^  2 | 5$" "$work/sql.out" || { echo "sql_query: no row 2 | 5 as of the first commit"; cat "$work/sql.out"; exit 1; }
echo "install test: find_package(Spool) and pkg-config consumers, and examples/, passed"
