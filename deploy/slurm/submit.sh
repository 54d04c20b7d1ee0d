#!/bin/bash
# Submits a job array of SHARDS tasks (default 4) running gradsolve with
# the arguments given, and the merge after it:
#
#   SHARDS=4 OUT=/scratch/run1 deploy/slurm/submit.sh solve examples/lorenz.ode \
#       --n 1000000 --param rho=0:21 --sens rho
#
# SBATCH_ARGS holds further sbatch options for both jobs, split at blanks,
# given on the command line so that they override the scripts' #SBATCH
# lines: a partition, an account, a time limit, or fewer CPUs per task
# than shard.sbatch's 4 on smaller nodes (a task asking for more CPUs
# than a node has pends for ever, reason PartitionConfig):
#
#   SBATCH_ARGS="--partition=short --time=1:00:00 --cpus-per-task=2" deploy/slurm/submit.sh …
#
# The last line it prints, "array job A (N shards), merge job M: …", names
# the two job ids.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SHARDS:=4}"
: "${OUT:=out}"
export OUT GRADSOLVE="${GRADSOLVE:-gradsolve}"
read -r -a extra <<<"${SBATCH_ARGS:-}"
array=$(sbatch --parsable --export=ALL "${extra[@]}" --array=0-$((SHARDS - 1)) "$here/shard.sbatch" "$@")
merge=$(sbatch --parsable --export=ALL "${extra[@]}" --dependency=afterok:"$array" "$here/merge.sbatch")
echo "array job $array ($SHARDS shards), merge job $merge: outputs in $OUT/merged"
