#!/usr/bin/env bash
# Integration test of the job-array scripts beside this file on a real,
# single-node Slurm (issue 16, item 4). As root on a Debian or Ubuntu
# machine, from anywhere in the checkout:
#
#   bash deploy/slurm/integration.sh
#
# It
#   1. installs Debian's slurm-wlm and munge with apt-get where they are
#      missing (services are not started by the install);
#   2. starts a private munged (its own key and socket) and a private
#      single-node cluster: slurm.conf, state, spool and logs in a
#      temporary directory, on free ports, daemons run in the foreground
#      (-D, -F) as its own children, no systemd; it touches no
#      /etc/slurm, /etc/munge or running daemon of the machine;
#   3. waits for the node to be idle and runs a probe job;
#   4. builds gradsolve and submits, through submit.sh, a 4-task array
#      and its merge job for each of
#        solve examples/lorenz.ode --n 5001 --param rho=0:21 --sens rho,sigma --saveat 0.5,1
#        grad  examples/lorenz.ode --n 5001 --param rho=0:21 --saveat 0.5,1 \
#              --data Y_SAVED.npy --data-final Y_FINAL.npy
#      (the targets are an unsharded solve at rho=1:22), waits for them,
#      and compares each merged directory with an unsharded run of the same
#      command: cmp on every .npy file, and the loss and counts of
#      stats.json;
#   5. shows on these outputs that gradsolve merge refuses a shard of
#      another tolerance, a missing shard and a shard of another command;
#   6. cancels its jobs, stops every daemon it started (by pid) and
#      removes its temporary directory, on every exit.
#
# Exit status: 0 when everything matched, or after "SKIP: <reason>" where
# a Slurm cannot be had here (not root, no apt-get or the install fails,
# the daemons do not come up, the probe job does not run, or the time
# bound passes before the probe job has run); 1 on a real failure (a job
# of ours failed or cannot start, a mismatch, a merge that should have
# been refused); 124 when the time bound passes after Slurm has run the
# probe job. The bound is SLURM_IT_LIMIT seconds (default 600); a run
# here takes 25–35 s once the packages are installed. KEEP=1 keeps the
# temporary directory for a look afterwards. The log is what it prints.
set -uo pipefail

limit=${SLURM_IT_LIMIT:-600}
if [ -z "${SLURM_IT_INNER:-}" ]; then
	# The overall bound: timeout signals this script's process group, the
	# trap below cleans up; the phases have shorter bounds of their own.
	# The inner run writes "ran" into $SLURM_IT_MARK once Slurm has run
	# its probe job: a bound passed before that is a Slurm that could not
	# be had here (SKIP), after it a run of ours that hung (FAIL).
	SLURM_IT_MARK=$(mktemp) || exit 1
	export SLURM_IT_INNER=1 SLURM_IT_MARK
	timeout --kill-after=60 "$limit" bash "$0" "$@"
	rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		if [ "$(cat "$SLURM_IT_MARK")" = ran ]; then
			echo "FAIL: the integration test ran past its bound of $limit s"
		else
			echo "SKIP: Slurm was not up and running a job within the bound of $limit s"
			rc=0
		fi
	fi
	rm -f "$SLURM_IT_MARK"
	exit "$rc"
fi

repo=$(cd "$(dirname "$0")/../.." && pwd)
here="$repo/deploy/slurm"
start=$SECONDS
tmp=""
munged_pid="" ctld_pid="" slurmd_pid=""
made_policy=""
stepds_before=""
submitted=()

say() { printf '[%4ds] %s\n' "$((SECONDS - start))" "$*"; }
skip() {
	say "SKIP: $*"
	exit 0
}
fail() {
	say "FAIL: $*"
	exit 1
}

# logs prints the tail of the daemons' logs and of every job log.
logs() {
	[ -n "$tmp" ] && [ -d "$tmp" ] || return 0
	local f
	for f in "$tmp"/log/*.log "$tmp"/run/*/*.log "$tmp"/run/*.out; do
		[ -f "$f" ] || continue
		echo "---- ${f#"$tmp"/} (last 30 lines)"
		tail -n 30 "$f"
	done
	echo "----"
}

# alive PID says whether a process is running (a zombie, dead but not yet
# reaped by its parent, is not).
alive() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}

# ours PID says whether a running process belongs to our cluster: its
# environment names our slurm.conf (slurmd passes its own to the step
# daemons, and the jobs inherit the submitter's).
ours() {
	{ tr '\0' '\n' <"/proc/$1/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$tmp/slurm.conf"
}

# new_stepds lists the running step daemons that were not there when we
# started (ours, or conceivably another cluster's: they are waited for,
# not stopped); our_leftovers the running step daemons and job processes
# of our cluster.
new_stepds() {
	local p
	for p in $(pgrep -x slurmstepd 2>/dev/null); do
		case " $stepds_before " in *" $p "*) continue ;; esac
		alive "$p" && echo "$p"
	done
	return 0
}
our_leftovers() {
	local p
	[ -n "$tmp" ] || return 0
	for p in $(pgrep -x slurmstepd 2>/dev/null) $(grep -l --null-data '^SLURM_JOB_ID=' /proc/[0-9]*/environ 2>/dev/null | sed 's|/proc/\([0-9]*\)/environ|\1|'); do
		[ "$p" != $$ ] && alive "$p" && ours "$p" && echo "$p"
	done
	return 0
}

# stop ends one process we started: TERM, up to 15 s, then KILL.
stop() {
	local name=$1 pid=$2 i
	[ -n "$pid" ] || return 0
	if ! alive "$pid"; then
		wait "$pid" 2>/dev/null
		say "$name (pid $pid) had already exited"
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 1 30); do
		if ! alive "$pid"; then
			wait "$pid" 2>/dev/null
			say "stopped $name (pid $pid)"
			return 0
		fi
		sleep 0.5
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	say "killed $name (pid $pid): it did not stop on TERM within 15 s"
}

cleanup() {
	local rc=$? i p ids left=()
	set +e
	trap - EXIT TERM INT
	[ "$rc" != 0 ] && logs
	# Cancel our jobs where the controller still answers, and give their
	# step daemons (slurmstepd, with the job's processes under it), which
	# end a moment after the job has left squeue, time to finish before
	# slurmd goes.
	if [ -n "$ctld_pid" ] && alive "$ctld_pid" && timeout 3 squeue -h >/dev/null 2>&1; then
		if [ ${#submitted[@]} -gt 0 ]; then
			timeout 5 scancel "${submitted[@]}" 2>/dev/null
			for i in $(seq 1 40); do
				ids=$(timeout 3 squeue -h -o %i 2>/dev/null) || break
				[ -z "$ids" ] && break
				sleep 0.5
			done
		fi
		for i in $(seq 1 30); do
			[ -z "$(new_stepds)" ] && break
			sleep 0.5
		done
	fi
	stop slurmd "$slurmd_pid"
	stop slurmctld "$ctld_pid"
	stop munged "$munged_pid"
	# Where the jobs could not be cancelled (the controller gone), their
	# step daemons and processes are still there: TERM, 5 s, KILL.
	mapfile -t left < <(our_leftovers)
	if [ ${#left[@]} -gt 0 ]; then
		say "stopping what is left of our jobs: $(for p in "${left[@]}"; do printf '%s(%s) ' "$(cat "/proc/$p/comm" 2>/dev/null)" "$p"; done)"
		kill -TERM "${left[@]}" 2>/dev/null
		for i in $(seq 1 10); do
			[ -z "$(our_leftovers)" ] && break
			sleep 0.5
		done
		mapfile -t left < <(our_leftovers)
		[ ${#left[@]} -eq 0 ] || kill -KILL "${left[@]}" 2>/dev/null
	fi
	mapfile -t left < <(for p in $munged_pid $ctld_pid $slurmd_pid $(our_leftovers); do alive "$p" && echo "$p"; done)
	if [ ${#left[@]} -gt 0 ]; then
		say "still running after the cleanup: ${left[*]}"
	elif [ -n "$munged_pid" ]; then
		say "no daemon or job process of ours left running"
	fi
	if [ -n "$made_policy" ]; then
		rm -f /usr/sbin/policy-rc.d
	fi
	if [ -n "$tmp" ] && [ -d "$tmp" ]; then
		if [ -n "${KEEP:-}" ]; then
			say "kept $tmp (KEEP=1)"
		else
			rm -rf "$tmp"
			say "removed $tmp"
		fi
	fi
	say "exit $rc"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

say "gradsolve Slurm integration test: $repo on $(uname -n), $(nproc) CPUs, bound $limit s"

# ---- 1. packages
[ "$(id -u)" = 0 ] || skip "not root (the test installs packages and runs slurmd, which needs root)"
need=(slurmctld slurmd sbatch scontrol sinfo squeue scancel munged munge unmunge)
missing() {
	local c
	for c in "${need[@]}"; do command -v "$c" >/dev/null 2>&1 || return 0; done
	return 1
}
if missing; then
	command -v apt-get >/dev/null 2>&1 || skip "slurm-wlm and munge are not installed and there is no apt-get"
	apt=(apt-get -q -y)
	# apt's download helper runs as the user _apt and writes its temporary
	# files into /tmp; where /tmp is not world-writable it cannot.
	if [ "$(stat -c %a /tmp)" != 1777 ]; then
		apt+=(-o APT::Sandbox::User=root)
	fi
	# Keep the packages' maintainer scripts from starting the system's
	# munge and slurm services: this test runs its own.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		made_policy=1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-cache show slurm-wlm munge >/dev/null 2>&1; then
		say "apt-get update"
		timeout 120 "${apt[@]}" update >/dev/null 2>&1 || say "apt-get update failed; trying the package lists there are"
	fi
	say "apt-get install slurm-wlm munge"
	if ! timeout 240 "${apt[@]}" install --no-install-recommends slurm-wlm munge >"/tmp/gradsolve-slurm-apt.$$.log" 2>&1; then
		tail -n 20 "/tmp/gradsolve-slurm-apt.$$.log"
		rm -f "/tmp/gradsolve-slurm-apt.$$.log"
		skip "apt-get install slurm-wlm munge failed"
	fi
	rm -f "/tmp/gradsolve-slurm-apt.$$.log"
	if [ -n "$made_policy" ]; then
		rm -f /usr/sbin/policy-rc.d
		made_policy=""
	fi
	missing && skip "slurm-wlm and munge installed, but one of ${need[*]} is still missing"
else
	say "slurm-wlm and munge already installed"
fi
say "$(dpkg-query -W -f 'slurm-wlm ${Version}' slurm-wlm 2>/dev/null || echo 'slurm-wlm (not a Debian package)'), $(munged -V 2>&1 | head -n 1)"

# ---- 2. munged and the cluster
# The daemons run in sessions of their own (setsid, which execs in place:
# $! is the daemon), so that the bound's signal to this script's process
# group leaves them up for the cleanup to cancel our jobs through them.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gradsolve-slurm.XXXXXX") || fail "mktemp failed"
# munged wants its socket's directory, and every directory above it,
# searchable by all, and its key readable by its owner alone.
chmod 755 "$tmp"
mkdir -p "$tmp/munge" "$tmp/msock" "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/run" "$tmp/bin" "$tmp/whole"
chmod 700 "$tmp/munge"
chmod 755 "$tmp/msock"
stepds_before=$(pgrep -x slurmstepd 2>/dev/null | tr '\n' ' ')

key="$tmp/munge/munge.key"
if command -v mungekey >/dev/null 2>&1; then
	mungekey --create --keyfile="$key" || fail "mungekey failed"
else
	dd if=/dev/urandom of="$key" bs=1 count=1024 status=none || fail "could not write a munge key"
fi
chmod 400 "$key"
sock="$tmp/msock/munge.socket"
setsid munged -F --key-file="$key" --socket="$sock" --pid-file="$tmp/munge/munged.pid" \
	--seed-file="$tmp/munge/munged.seed" --log-file="$tmp/log/munged.log" >"$tmp/log/munged.out.log" 2>&1 &
munged_pid=$!
for i in $(seq 1 40); do
	[ -S "$sock" ] && break
	kill -0 "$munged_pid" 2>/dev/null || break
	sleep 0.25
done
if ! munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; then
	tail -n 20 "$tmp/log/munged.out.log"
	skip "munged did not come up (no credential round trip within 10 s)"
fi
say "munged up (pid $munged_pid, socket $sock)"

# Two free TCP ports on the loopback for slurmctld and slurmd, away from
# Slurm's defaults (6817, 6818) so that a cluster of the machine's own is
# left alone.
inuse() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=17817
while inuse "$port" || inuse "$((port + 1))"; do
	port=$((port + 2))
	[ "$port" -lt 17917 ] || skip "no two free ports in 17817…17917"
done

node=$(hostname -s)
hw=$(slurmd -C 2>/dev/null | head -n 1)
case "$hw" in
NodeName=*) ;;
*) skip "slurmd -C printed no node line" ;;
esac
hw=${hw#NodeName=* }
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# A single-node cluster for deploy/slurm/integration.sh (removed after).
ClusterName=gradsolve-it
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/builtin
MaxArraySize=1001
# Keep finished jobs in scontrol's view (there is no accounting database).
MinJobAge=900
# A merge whose array failed is cancelled instead of pending for ever.
DependencyParameters=kill_invalid_depend
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
say "slurm.conf: node $node ($hw), ports $port, $((port + 1))"

setsid slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out.log" 2>&1 &
ctld_pid=$!
setsid slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/log/slurmd.out.log" 2>&1 &
slurmd_pid=$!
state=""
for i in $(seq 1 60); do
	state=$(sinfo -h -N -n "$node" -o %t 2>/dev/null)
	[ "$state" = idle ] && break
	kill -0 "$ctld_pid" 2>/dev/null || break
	kill -0 "$slurmd_pid" 2>/dev/null || break
	sleep 1
done
if [ "$state" != idle ]; then
	logs
	skip "the node did not come up idle within 60 s (sinfo: '${state:-no answer}')"
fi
say "slurmctld (pid $ctld_pid) and slurmd (pid $slurmd_pid) up; sinfo:"
sinfo

# jobinfo prints scontrol's one-line record of every job (every task of
# an array) given.
jobinfo() {
	local id
	for id in "$@"; do scontrol -o show job "$id" 2>/dev/null; done
}

# wait_jobs SECONDS ID… returns when every job given has ended (0), or
# sets why and returns 1 when one pends for a reason that will not pass or
# when they have not ended within SECONDS.
terminal='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$'
why=""
wait_jobs() {
	local limit=$1 deadline=$((SECONDS + $1)) running st reason
	shift
	while :; do
		running=0
		while read -r st reason; do
			[ -n "$st" ] || continue
			[[ $st =~ $terminal ]] && continue
			running=$((running + 1))
			case $reason in
			PartitionConfig | BadConstraints | DependencyNeverSatisfied | JobHeld* | PartitionNodeLimit | PartitionTimeLimit)
				why="a job of ours cannot run: pending with reason $reason"
				return 1
				;;
			esac
		done < <(jobinfo "$@" | tr ' ' '\n' | sed -n 's/^JobState=//p; s/^Reason=//p' | paste - -)
		[ "$running" = 0 ] && return 0
		if [ "$SECONDS" -gt "$deadline" ]; then
			why="$running of our jobs had not ended after $limit s"
			return 1
		fi
		sleep 1
	done
}

# ---- 3. a probe job: can this Slurm run a job at all?
# shellcheck disable=SC2016 # expanded in the job
probe=$(cd "$tmp/run" && sbatch --parsable -o "$tmp/run/probe.out" --wrap 'echo "probe job $SLURM_JOB_ID ran on $(hostname)"')
[ -n "$probe" ] || skip "Slurm came up but refused the probe job"
submitted+=("$probe")
if ! wait_jobs 60 "$probe"; then
	logs
	skip "Slurm came up but its probe job did not run: $why"
fi
if ! jobinfo "$probe" | grep -q 'JobState=COMPLETED'; then
	logs
	skip "Slurm came up but its probe job did not complete: $(jobinfo "$probe" | grep -o '\<JobState=[^ ]*\|\<Reason=[^ ]*\|\<ExitCode=[^ ]*' | tr '\n' ' ')"
fi
say "$(cat "$tmp/run/probe.out")"
echo ran >"${SLURM_IT_MARK:-/dev/null}"

# ---- 4. the arrays
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="$PATH:/usr/local/go/bin"
fi
command -v go >/dev/null 2>&1 || fail "no go command to build gradsolve with"
say "go build -o $tmp/bin/gradsolve ./cmd/gradsolve"
(cd "$repo" && go build -o "$tmp/bin/gradsolve" ./cmd/gradsolve) || fail "go build failed"
G="$tmp/bin/gradsolve"
ode="$repo/examples/lorenz.ode"
n=5001 # 1250, 1250, 1250 and 1251 rows: the shards differ in size

# grad's targets: the final and saved states of another sweep, as files
# every task reads its rows of (and merge reads again for the loss).
"$G" solve "$ode" --n "$n" --param rho=1:22 --saveat 0.5,1 --out "$tmp/targets" -q || fail "solving grad's targets failed"
# shellcheck disable=SC2054 # the commas are gradsolve's lists
solve_args=(solve "$ode" --n "$n" --param rho=0:21 --sens rho,sigma --saveat 0.5,1)
# shellcheck disable=SC2054
grad_args=(grad "$ode" --n "$n" --param rho=0:21 --saveat 0.5,1
	--data "$tmp/targets/y_saved.npy" --data-final "$tmp/targets/y_final.npy")

# One CPU per task (the node may have fewer than shard.sbatch's 4): the
# shards run with one worker, the unsharded runs below with every CPU.
export SBATCH_ARGS="--cpus-per-task=1" GRADSOLVE="$G" SHARDS=4
declare -A array_of merge_of
for job in solve grad; do
	if [ "$job" = solve ]; then args=("${solve_args[@]}"); else args=("${grad_args[@]}"); fi
	mkdir -p "$tmp/run/$job"
	say "submit.sh ${args[*]#"$repo/"}"
	line=$(cd "$tmp/run/$job" && OUT="$tmp/run/$job/out" "$here/submit.sh" "${args[@]}") || fail "submit.sh failed for $job"
	say "  $line"
	ids=$(sed -n 's/^array job \([0-9]*\) .*merge job \([0-9]*\):.*/\1 \2/p' <<<"$line")
	[ -n "$ids" ] || fail "could not read the job ids from submit.sh's output"
	array_of[$job]=${ids% *}
	merge_of[$job]=${ids#* }
	submitted+=("${array_of[$job]}" "${merge_of[$job]}")
done

# While the arrays run, the unsharded runs of the same commands.
for job in solve grad; do
	if [ "$job" = solve ]; then args=("${solve_args[@]}"); else args=("${grad_args[@]}"); fi
	"$G" "${args[@]}" --shard off --out "$tmp/whole/$job" -q || fail "the unsharded $job failed"
done
say "unsharded runs written to whole/solve, whole/grad"

if ! wait_jobs 300 "${submitted[@]}"; then
	squeue
	fail "$why"
fi
say "all jobs ended:"
summary=$(jobinfo "${submitted[@]}" | while read -r line; do
	echo "    $(grep -o '\<\(JobId\|ArrayJobId\|ArrayTaskId\|JobName\|JobState\|ExitCode\|NodeList\)=[^ ]*' <<<"$line" | tr '\n' ' ')"
done)
echo "$summary"
nbad=$(grep -vc 'JobState=COMPLETED' <<<"$summary")
[ "$nbad" = 0 ] || fail "$nbad of our jobs did not complete (the logs follow)"

# ---- compare with the unsharded runs
status=0 passed=0
for job in solve grad; do
	w="$tmp/whole/$job" o="$tmp/run/$job/out"
	m="$o/merged"
	[ -f "$m/stats.json" ] || fail "$job: the merge job wrote no $m/stats.json"
	for i in 0 1 2 3; do
		from=$(sed -n 's/^ *"from": "\(.*\)",\{0,1\}$/\1/p' "$o/shard-$i/shard.json" | head -n 1)
		rows=$(tr -d ' \n' <"$o/shard-$i/shard.json" | sed -n 's/.*"rows":\[\([0-9]*\),\([0-9]*\)\].*/[\1, \2)/p')
		say "$job shard-$i: rows $rows, from $from"
		case $from in *SLURM_ARRAY_TASK_ID=$i*) ;; *) fail "$job shard-$i did not take its shard from the array's variables" ;; esac
		want="[$((i * n / 4)), $(((i + 1) * n / 4)))"
		[ "$rows" = "$want" ] || fail "$job shard-$i solved rows $rows, not $want"
		passed=$((passed + 1))
	done
	nw=$(cd "$w" && printf '%s\n' *.npy | sort) nm=$(cd "$m" && printf '%s\n' *.npy | sort)
	if [ "$nw" != "$nm" ]; then
		say "MISMATCH $job: the unsharded run wrote $(tr '\n' ' ' <<<"$nw"), the merge $(tr '\n' ' ' <<<"$nm")"
		status=1
	fi
	for f in "$w"/*.npy; do
		b=$(basename "$f")
		if cmp -s "$f" "$m/$b"; then
			say "$job: $b identical ($(stat -c %s "$f") bytes)"
			passed=$((passed + 1))
		else
			say "MISMATCH $job: $b differs: $(cmp "$f" "$m/$b" 2>&1 | head -n 1)"
			status=1
		fi
	done
	for key in loss accepted_steps rejected_steps f_evaluations failed n; do
		vw=$(sed -n "s/^  \"$key\": \(.*\),\$/\1/p" "$w/stats.json")
		vm=$(sed -n "s/^  \"$key\": \(.*\),\$/\1/p" "$m/stats.json")
		[ -n "$vw$vm" ] || continue
		if [ "$vw" = "$vm" ]; then
			say "$job: stats.json $key = $vw in both"
			passed=$((passed + 1))
		else
			say "MISMATCH $job: stats.json $key is $vw unsharded, $vm merged"
			status=1
		fi
	done
done
grep -q '^  "loss": ' "$tmp/whole/grad/stats.json" || fail "grad's stats.json has no loss"
[ "$status" = 0 ] || fail "the merged outputs differ from the unsharded runs"

# ---- 5. merge refuses what does not belong together
o="$tmp/run/solve/out"
"$G" "${solve_args[@]}" --rtol 1e-6 --shard 2/4 --out "$tmp/run/rtol-shard-2" -q || fail "the --rtol 1e-6 shard failed"
refuse() {
	local what=$1 want=$2 out
	shift 2
	if out=$("$G" merge --out "$tmp/run/refused" "$@" 2>&1); then
		fail "merge accepted $what"
	fi
	[ ! -e "$tmp/run/refused/stats.json" ] || fail "merge refused $what but wrote stats.json"
	say "merge of $what refused: $out"
	case $out in *"$want"*) ;; *) fail "merge's refusal of $what does not name $want" ;; esac
	passed=$((passed + 1))
}
refuse "shard 2 of another tolerance" "--rtol" "$o/shard-0" "$o/shard-1" "$tmp/run/rtol-shard-2" "$o/shard-3"
refuse "three of four shards" "missing" "$o/shard-0" "$o/shard-1" "$o/shard-3"
refuse "a solve shard among grad shards" "different" "$tmp/run/grad/out/shard-0" "$o/shard-1" "$tmp/run/grad/out/shard-2" "$tmp/run/grad/out/shard-3"

say "PASS: the merged 4-task arrays of solve --sens --saveat and grad are bitwise the unsharded runs; merge refuses mismatched shards"
echo "slurm: $passed passed, 0 failed"
