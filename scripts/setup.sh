#!/usr/bin/env bash
# Installs every Debian package Spool's build, tests and benchmarks need.
# Idempotent, and quick when everything is already installed. Run as root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  clang libclang-rt-14-dev lld
  libgtest-dev libgmock-dev libbenchmark-dev
  liblmdb-dev libzstd-dev liblz4-dev libxxhash-dev libjemalloc-dev libabsl-dev
  libflatbuffers-dev flatbuffers-compiler
  libcli11-dev libfmt-dev nlohmann-json3-dev libboost-dev prometheus-cpp-dev curl
  librocksdb-dev libsqlite3-dev libleveldb-dev libedit-dev
  nats-server libnats-dev
  gnuplot-nox python3 clang-format clang-tidy
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
