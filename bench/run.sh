#!/usr/bin/env bash
# Builds the peer solvers' drivers and runs gradsolve's work-precision
# benchmarks (bench/README.md). Installs what it needs from Debian:
# libboost-dev (Boost.odeint), libsundials-dev (CVODES), python3-scipy.
# Pass -quick for a smoke run; other arguments go to bench/wp.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[ -f /usr/include/boost/numeric/odeint.hpp ] || need+=(libboost-dev)
[ -f /usr/include/cvodes/cvodes.h ] || need+=(libsundials-dev)
/usr/bin/python3 -c 'import scipy' 2>/dev/null || need+=(python3-scipy)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y --no-install-recommends g++ "${need[@]}"
fi

mkdir -p bench/build
# The peers get their compilers' best: -O3 and the host's instruction set.
g++ -O3 -march=native -DNDEBUG -o bench/build/odeint bench/peers/odeint.cpp
gcc -O3 -march=native -o bench/build/cvodes bench/peers/cvodes.c -lsundials_cvodes -lsundials_nvecserial -lsundials_sunlinsoldense -lsundials_sunmatrixdense -lm

go run ./bench/wp -peers bench/build "$@"
