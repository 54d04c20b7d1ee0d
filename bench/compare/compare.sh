#!/bin/bash
# compare.sh BASE [ROUNDS] [BENCHTIME]: per step attempt, the whole-solve
# benchmarks of issue 13 (Lorenz and the halo with sensitivities, Go and
# .ode routes, Tsit5, Vern7 and DP8; Robertson with Rodas5P) on commit
# BASE and on this working tree, one worker, as ROUNDS adjacent pairs per
# benchmark with the order alternating, then the median of the ratios.
#
#   bench/compare/compare.sh a3f84d2 24
#
# The same benchmark source (cmp_test.go.in) is dropped into both trees;
# only how Rodas5P is named in Options differs (Options.Rosenbrock before
# the registry, Options.Method after).
set -euo pipefail
base=${1:?usage: compare.sh BASE [ROUNDS] [BENCHTIME]}
rounds=${2:-24}
bt=${3:-5x}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -f "$root/zz_cmp_test.go" "$root/zz_cmpopt_test.go"; rm -rf "$work"' EXIT
git -C "$root" worktree add -q --detach "$work/base" "$base"
for tree in "$work/base" "$root"; do
	cp "$here/cmp_test.go.in" "$tree/zz_cmp_test.go"
	field=Method
	if grep -q 'Rosenbrock \*method.Rosenbrock' "$tree/solve.go"; then field=Rosenbrock; fi
	cat > "$tree/zz_cmpopt_test.go" <<GO
package gradsolve_test

import (
	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
)

func robOptions() gradsolve.Options {
	return gradsolve.Options{$field: method.Rodas5P, RTol: 1e-8, ATol: 1e-12}
}
GO
done
(cd "$work/base" && go test -c -o "$work/old.test" .)
(cd "$root" && go test -c -o "$work/new.test" .)
benches="Lorenz/go/Tsit5 Lorenz/go/Vern7 Lorenz/go/DP8 Lorenz/ode/Tsit5 Lorenz/ode/Vern7 Lorenz/ode/DP8
HaloSens/go/Tsit5 HaloSens/go/Vern7 HaloSens/go/DP8 HaloSens/ode/Tsit5 HaloSens/ode/Vern7 HaloSens/ode/DP8
Robertson/Rodas5P"
out="$work/pairs.txt"
for b in $benches; do
	for r in $(seq "$rounds"); do
		if ((r % 2)); then order="old new"; else order="new old"; fi
		for v in $order; do
			dir=$root
			if [ "$v" = old ]; then dir=$work/base; fi
			(cd "$dir" && "$work/$v.test" -test.run XXX -test.bench "Cmp13/^$b\$" -test.benchtime "$bt") |
				grep '^Benchmark' | sed "s/^/$v /" >> "$out"
		done
	done
done
python3 "$here/summarize.py" "$out" "$base"
