#!/usr/bin/env bash
# bench/gpu/run.sh: the cuda engine on a real GPU (issue 17).
#
#   bench/gpu/run.sh build   build the binaries here, into bench/gpu/bin
#   bench/gpu/run.sh run     on a machine with an NVIDIA GPU, from the
#                            repository root, with the binaries built:
#                            the conformance suite through the real driver
#                            (the cuda engine against cpu-erk and cpu-ros),
#                            then the throughput sweep n = 2^10 ... 2^24:
#                            lorenz and halo forward and their gradients
#                            through the explicit in-kernel adjoint, the
#                            halo with sensitivities, robertson forward and
#                            its gradient through the Rosenbrock adjoint,
#                            each on the GPU, then on the CPU lane engines
#   bench/gpu/run.sh dry     build, then both steps on the emulated device
#                            (no GPU; small n): the script's logic here
#   bench/gpu/run.sh         build, then run
#
# The binaries are built with CGO_ENABLED=0: purego's fakecgo loads the
# CUDA driver at run time, so they need no CUDA toolkit, no Go and no C
# compiler on the GPU machine, only the system's C library and its
# dynamic loader (a binary that loads libcuda.so.1 cannot be fully
# static); "build" prints what the dynamic section asks for.
#
# Results go to bench/gpu/out (OUT=DIR to change): conformance.txt,
# sweep.txt, gpu.csv, ratios.csv (each gradient over its forward solve;
# the CPU over the GPU), gpu.png. The whole run keeps within 10 minutes:
# the suite has 4 minutes at most, the sweep starts no point after 4
# more and is stopped at 5 (docs/gpu.md estimates it at about 3 on an
# H200 machine).
set -euo pipefail

cd "$(dirname "$0")/../.."
BIN=bench/gpu/bin
OUT=${OUT:-bench/gpu/out}
mode=${1:-all}

build() {
	mkdir -p "$BIN"
	echo "building into $BIN (CGO_ENABLED=0)"
	CGO_ENABLED=0 go build -trimpath -o "$BIN/gpubench" ./bench/gpu
	CGO_ENABLED=0 go build -trimpath -o "$BIN/gradsolve" ./cmd/gradsolve
	CGO_ENABLED=0 go test -c -trimpath -o "$BIN/enginetest.test" ./internal/enginetest
	if command -v readelf >/dev/null; then
		for b in "$BIN"/*; do
			deps=$(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
			echo "  $(basename "$b"): needs ${deps:-nothing}"
		done
	fi
}

# conformance ENGINE [ENV...]: the suite on ENGINE alone; fails unless
# it ran (a skip means the engine cannot run here).
conformance() {
	local engine=$1
	shift
	echo "conformance suite on $engine (log: $OUT/conformance.txt)"
	local rc=0
	(cd internal/enginetest && env "$@" GRADSOLVE_CONFORMANCE_ENGINES="$engine" \
		timeout 240 "../../$BIN/enginetest.test" -test.run '^TestConformance$' -test.v -test.timeout 235s) \
		>"$OUT/conformance.txt" 2>&1 || rc=$?
	grep -E "^\s*--- (PASS|FAIL|SKIP): TestConformance/$engine( |/)" "$OUT/conformance.txt" || true
	if grep -qE "^\s*--- SKIP: TestConformance/$engine " "$OUT/conformance.txt"; then
		grep -A1 -E "^\s*--- SKIP: TestConformance/$engine " "$OUT/conformance.txt" | tail -1
		echo "the suite skipped $engine: it cannot run here" >&2
		return 1
	fi
	if [ "$rc" -ne 0 ] || ! grep -qE "^\s*--- PASS: TestConformance/$engine " "$OUT/conformance.txt"; then
		echo "the conformance suite failed on $engine (exit $rc): see $OUT/conformance.txt" >&2
		return 1
	fi
}

# sweep ENGINE ARGS...: the throughput sweep.
sweep() {
	local engine=$1
	shift
	echo "throughput sweep on $engine (log: $OUT/sweep.txt)"
	timeout 300 "$BIN/gpubench" -engine "$engine" -out "$OUT" "$@" | tee "$OUT/sweep.txt"
}

need_binaries() {
	for b in gpubench gradsolve enginetest.test; do
		if [ ! -x "$BIN/$b" ]; then
			echo "$BIN/$b is missing: run bench/gpu/run.sh build first" >&2
			exit 2
		fi
	done
}

run() {
	need_binaries
	mkdir -p "$OUT"
	# Say plainly where CUDA cannot run, in the engine's words.
	if ! "$BIN/gradsolve" solve examples/lorenz.ode --engine cuda --n 4096 --ref 0 -q; then
		echo "no usable CUDA device here: nothing measured" >&2
		exit 2
	fi
	conformance cuda
	sweep cuda -lo 10 -hi 24 -sens-hi 20 -cpu-hi 20 -cpu-sens-hi 18 -budget 500ms -deadline 4m
}

dry() {
	build
	mkdir -p "$OUT"
	export GRADSOLVE_CUDA_EMULATE=1
	"$BIN/gradsolve" solve examples/lorenz.ode --engine cuda-emu --n 64 --ref 0 -q
	conformance cuda-emu-test
	sweep cuda-emu -lo 6 -hi 8 -sens-hi 7 -cpu-hi 8 -cpu-sens-hi 7 -budget 0 -deadline 2m
	for f in conformance.txt sweep.txt gpu.csv ratios.csv gpu.png; do
		[ -s "$OUT/$f" ] || {
			echo "dry run: $OUT/$f is missing or empty" >&2
			exit 1
		}
	done
	echo "dry run complete: $OUT"
}

case $mode in
build) build ;;
run) run ;;
dry) dry ;;
all)
	build
	run
	;;
*)
	echo "usage: bench/gpu/run.sh [build|run|dry]" >&2
	exit 2
	;;
esac
