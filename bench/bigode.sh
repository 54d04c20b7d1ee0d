#!/usr/bin/env bash
# Measures the cost of large problem files on the command-line route
# (docs/benchmarks.md, "Large problems"): for each size it writes a
# problem file, runs `gradsolve solve FILE --n 1 --ref 0` under
# /usr/bin/time and prints wall seconds, peak resident memory and the
# solve time the command reports.
#
#   bash bench/bigode.sh                  # linear chains of 1000…10000 states, and 1e5 sin terms
#   bash bench/bigode.sh 20000 50000      # other chain sizes
#   METHOD=rodas5p bash bench/bigode.sh 500 1000   # any --method (Rosenbrock builds the dense Jacobian)
#
# The chain is y0' = -k*y0, yi' = c*y(i-1) - k*yi (k = 1, c = 0.5,
# t in [0, 1]); the sin sum is x' = sum over i < 1e5 of
# 1e-5*sin((1 + i/1e5)*x + b), b = 0.25, x(0) = 0.5, t in [0, 1].
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 2000 5000 10000)
method=${METHOD:-tsit5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/gradsolve" ./cmd/gradsolve

linear() { # n file
  awk -v n="$1" 'BEGIN {
    print "name linear"; print "param k = 1, c = 0.5"; print "span 0 1"
    for (lo = 0; lo < n; lo += 50) {
      line = "state "
      for (i = lo; i < n && i < lo + 50; i++) line = line (i > lo ? ", " : "") "y" i " = " (i == 0 ? 1 : 0)
      print line
    }
    print "y0'"'"' = -k*y0"
    for (i = 1; i < n; i++) print "y" i "'"'"' = c*y" i - 1 " - k*y" i
  }' > "$2"
}

sinsum() { # terms file
  awk -v n="$1" 'BEGIN {
    print "name sinsum"; print "param b = 0.25"; print "state x = 0.5"; print "span 0 1"
    line = "x'"'"' = 0"
    for (i = 0; i < n; i++) line = line " + 1e-5*sin(" sprintf("%.17g", 1 + i / n) "*x + b)"
    print line
  }' > "$2"
}

run() { # label file
  local out
  out=$( { /usr/bin/time -f 'TIME %e %M' "$dir/gradsolve" solve "$2" --n 1 --ref 0 --method "$method"; } 2>&1 ) || { echo "$out"; exit 1; }
  local wall rss solve
  read -r wall rss < <(grep '^TIME' <<<"$out" | cut -d' ' -f2-)
  solve=$(grep '^  solve time' <<<"$out" | awk '{print $3}')
  steps=$(grep '^  steps' <<<"$out" | awk '{print $2}')
  printf '%-14s wall %6.2f s   peak RSS %7.1f MB   solve %-10s (%s steps)\n' "$1" "$wall" "$(awk -v k="$rss" 'BEGIN {print k/1024}')" "$solve" "$steps"
}

for n in "${sizes[@]}"; do
  linear "$n" "$dir/linear$n.ode"
  run "linear $n" "$dir/linear$n.ode"
done
if [ $# -eq 0 ]; then
  sinsum 100000 "$dir/sinsum.ode"
  run "sin sum 1e5" "$dir/sinsum.ode"
fi
