#!/bin/bash
# Submits a job array of SHARDS tasks (default 4) running gradsolve with
# the arguments given, and the merge after it:
#
#   SHARDS=4 OUT=/scratch/run1 deploy/slurm/submit.sh solve examples/lorenz.ode \
#       --n 1000000 --param rho=0:21 --sens rho
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SHARDS:=4}"
: "${OUT:=out}"
export OUT GRADSOLVE="${GRADSOLVE:-gradsolve}"
array=$(sbatch --parsable --export=ALL --array=0-$((SHARDS - 1)) "$here/shard.sbatch" "$@")
merge=$(sbatch --parsable --export=ALL --dependency=afterok:"$array" "$here/merge.sbatch")
echo "array job $array ($SHARDS shards), merge job $merge: outputs in $OUT/merged"
