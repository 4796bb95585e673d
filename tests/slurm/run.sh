#!/usr/bin/env bash
# frun on a real Slurm cluster (one controller and three slurmd nodes on loopback, started and
# stopped by cluster.sh, by pid): srun tasks sharing a file by claims and in fixed shares, and a
# broadcast stream, --results plus frun merge against a single-machine run byte for byte,
# scancel --signal=USR1 mid-run then the same command again on 3 and on 2 tasks, an sbatch
# --requeue job preempted by a higher-priority partition that finishes exactly once; sharing by
# claims with a slow task, a killed task, a joining srun and the job's end (from
# SLURM_JOB_END_TIME and from squeue).
#
# Usage: FRUN=path/to/frun bash tests/slurm/run.sh   (Debian's slurm-wlm must be installed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FRUN=$(realpath "${FRUN:?set FRUN to the frun binary}")
work=$(mktemp -d)
cluster=$work/cluster
cleanup() {
  if ((failures)) || [ "${status:-0}" != 0 ]; then # the daemons' view of a failure
    tail -n 15 "$cluster"/log/slurmd-node*.log "$cluster"/log/slurmctld.log 2>/dev/null | grep -v -i pmix >&2 || true
  fi
  bash "$here/cluster.sh" stop "$cluster" || true
  rm -rf "$work"
}
failures=0
trap 'status=$?; cleanup' EXIT
eval "$(bash "$here/cluster.sh" start "$cluster")"
export SLURM_CONF
cd "$work"

pass() { echo "ok: $*"; }
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# check NAME COMMAND...: passes when the command succeeds.
check() {
  if "${@:2}"; then pass "$1"; else fail "$1"; fi
}
# same NAME FILE EXPECTED: byte-for-byte equality.
same() {
  if cmp -s "$2" "$3"; then pass "$1"; else fail "$1 ($(wc -c <"$2") vs $(wc -c <"$3") bytes)"; fi
}
# Waits (up to $2 s) until the command $1 succeeds.
await() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    if eval "$1"; then return 0; fi
    sleep 0.1
  done
  return 1
}
# Bytes of output the tasks of results directory $1 have recorded as done so far.
done_lines() { cat "$1"/task-*.journal 2>/dev/null | grep -c '^done ' || true; }
job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

seq 1000000 >in
# A job with output per record (so it does not depend on batch sizes), and a slow one that
# stays on the cluster long enough to be stopped.
each=(printf 'r%s\n')
slow=(-L 1000 bash -c 'sleep 0.03; printf "r%s\n" "$@"' x)
"$FRUN" -k -a in "${each[@]}" >single
[ "$(wc -l <single)" = 1000000 ] || fail "the single-machine run"

# 1. A file on shared storage, three tasks, in order and not.
srun -N3 -n3 "$FRUN" --results r-ordered -k -a in "${each[@]}"
"$FRUN" merge r-ordered >merged
same "srun -N3 -n3 --results -k, merged == one frun -k" merged single
check "three tasks wrote results" [ "$(find r-ordered -name '*.out' | wc -l)" = 3 ]
srun -N3 -n3 "$FRUN" --share fixed --results r-ordered-fixed -k -a in "${each[@]}"
"$FRUN" merge r-ordered-fixed >merged
same "srun -N3 -n3 --share fixed --results -k, merged == one frun -k" merged single
srun -N3 -n3 "$FRUN" --results r-unordered -a in "${each[@]}"
"$FRUN" merge r-unordered | sort >merged
sort single >single.sorted
same "srun -N3 -n3 --results (unordered), merged == sorted lines" merged single.sorted
# Without --results srun gathers every task's stdout: each task counts its records, together
# all of them. (Small output: srun's I/O forwarding of megabytes from three tasks once failed
# on a loaded machine, a Slurm-side error, not frun's.)
total=$(srun -N3 -n3 "$FRUN" -s -a in wc -l | awk '{ s += $1 } END { print s }')
check "srun -N3 -n3 to stdout: the tasks' counts add up to 1000000 ($total)" [ "$total" = 1000000 ]

# 2. A stream sent to every task (srun --input=all); sent to task 0 only, the others refuse.
# 400000 records (2.7 MB: 3 chunks of 1 MiB, one per task), sent to each task by srun.
seq 400000 >in.small
"$FRUN" -k -a in.small "${each[@]}" >single.small
srun -N3 -n3 --input=all "$FRUN" --results r-stream -k "${each[@]}" <in.small
"$FRUN" merge r-stream >merged
same "srun --input=all stream, merged == one frun -k" merged single.small
if seq 10 | srun -N3 -n3 --input=0 "$FRUN" echo >out 2>err; then
  fail "a stream only task 0 receives was accepted"
elif [ "$(grep -c 'gets no input' err)" = 2 ]; then
  pass "srun --input=0: the two tasks without input refuse"
else
  fail "srun --input=0: $(cat err)"
fi

# 3. scancel --signal=USR1 mid-run checkpoints every task; the same command again, on 3 tasks
# and on 2, finishes exactly.
for again in 3 2; do
  dir=r-usr1-$again
  srun -N3 -n3 -J "usr1-$again" "$FRUN" --results "$dir" -k -a in "${slow[@]}" >/dev/null 2>"$dir.err" &
  run=$!
  await "[ \$(done_lines $dir) -ge 60 ]" 30 || fail "$dir: no progress"
  scancel --signal=USR1 "$(squeue -h -n "usr1-$again" -o %i)"
  if wait "$run"; then fail "$dir: the run was not stopped"; fi
  stopped=$(cat "$dir"/task-*.journal | grep -c '^stopped signal 10' || true)
  check "USR1: all 3 tasks checkpointed ($stopped)" [ "$stopped" = 3 ]
  if "$FRUN" merge "$dir" >/dev/null 2>/dev/null; then fail "$dir: complete after USR1"; fi
  srun -N"$again" -n"$again" "$FRUN" --results "$dir" -k -a in "${slow[@]}" 2>>"$dir.err"
  "$FRUN" merge "$dir" >merged
  same "USR1 mid-run, then the same command on $again tasks: merged == one frun -k" merged single
done

# 4. An sbatch --requeue job preempted by a job in a higher-priority partition: requeued, it
# runs again, continues from the journals and finishes exactly once.
cat >job.sh <<EOF
#!/usr/bin/env bash
srun -N3 -n3 "$FRUN" --results r-requeue -k -a in ${slow[*]@Q}
echo "restart=\${SLURM_RESTART_COUNT:-0} status=\$?" >>job.log
EOF
low=$(sbatch --parsable --requeue -p low -N3 -n3 --open-mode=append -o job.out job.sh)
await "[ \$(done_lines r-requeue) -ge 60 ]" 30 || fail "requeue: no progress"
high=$(sbatch --parsable -p high -N3 -n3 -o /dev/null --wrap 'sleep 1')
await "[ \"\$(job_field $low Restarts)\" = 1 ]" 30 || fail "requeue: the low job was not requeued"
# Slurm holds a requeued job back a few seconds; let it start as soon as the nodes are free.
await "[ \"\$(job_field $high JobState)\" = COMPLETED ]" 30 || fail "requeue: the high job did not run"
scontrol update jobid="$low" StartTime=now 2>/dev/null || true
await "[ \"\$(job_field $low JobState)\" = COMPLETED ]" 90 || fail "requeue: the low job did not finish"
check "requeue: the job ran twice" [ "$(job_field "$low" Restarts)" = 1 ]
check "requeue: the preempted tasks checkpointed" grep -q 'stopped signal 15' r-requeue/task-*.0.journal
tail -1 job.log | grep -qx 'restart=1 status=0' || fail "requeue: second run: $(cat job.log)"
"$FRUN" merge r-requeue >merged
same "requeued job, merged == one frun -k" merged single

# 5. Work sharing by claims (the default for a step's tasks writing to --results from a file)
# against fixed shares (--share fixed), one task's command three times slower: the claims run
# takes at most 0.6 of the fixed one, both merge exactly.
seq 60000 >in.share
"$FRUN" -k -a in.share "${each[@]}" >single.share
# shellcheck disable=SC2016  # expanded by each command's sh
uneven=(-j 1 -L 500 sh -c 'if [ "$SLURM_PROCID" = 0 ]; then sleep 0.3; else sleep 0.1; fi; printf "r%s\n" "$@"' x)
t0=$(date +%s%N)
srun -N3 -n3 "$FRUN" --share fixed --results r-fixed -k -a in.share "${uneven[@]}"
t1=$(date +%s%N)
srun -N3 -n3 "$FRUN" --results r-claims -k -a in.share "${uneven[@]}"
t2=$(date +%s%N)
fixed_ms=$(((t1 - t0) / 1000000)) claims_ms=$(((t2 - t1) / 1000000))
"$FRUN" merge r-fixed >merged
same "fixed shares, a slow task: merged == one frun -k" merged single.share
"$FRUN" merge r-claims >merged
same "claims, a slow task: merged == one frun -k" merged single.share
check "claims with a slow task take at most 0.6 of fixed shares (${claims_ms} ms vs ${fixed_ms} ms)" \
  [ $((claims_ms * 10)) -le $((fixed_ms * 6)) ]

# 6. kill -9 of one task's frun mid-run: the others take its open claims over; the merge is
# exact with no rerun.
share_cmd=(-L 500 sh -c 'printf "r%s\n" "$@"; sleep 0.1' x)
srun -N3 -n3 -J share-kill "$FRUN" --results r-kill -k -a in.share "${share_cmd[@]}" 2>kill.err &
run=$!
await "[ \$(ls r-kill/share 2>/dev/null | grep -c '^d-') -ge 5 ]" 30 || fail "kill: no progress"
victim=
for p in $(pgrep -f -- '--results r-kill' || true); do
  if [ "$(cat /proc/"$p"/comm 2>/dev/null)" = frun ]; then victim=$p; break; fi
done
kill -9 "$victim"
wait "$run" || true
"$FRUN" merge r-kill >merged
same "kill -9 of one task mid-run: merged == one frun -k, without a rerun" merged single.share
check "kill -9: the others said they took over" grep -q 'taking over the open claims' kill.err

# 7. A second srun on the same directory after 2 s joins the run: both do work.
srun -N2 -n2 "$FRUN" --stats --results r-join -k -a in.share "${share_cmd[@]}" 2>join1.err &
first=$!
sleep 2
srun -N1 -n1 "$FRUN" --stats --results r-join -k -a in.share "${share_cmd[@]}" 2>join2.err ||
  fail "join: the second srun failed: $(tail -3 join2.err)"
wait "$first" || fail "join: the first srun failed: $(tail -3 join1.err)"
"$FRUN" merge r-join >merged
same "a second srun joining after 2 s: merged == one frun -k" merged single.share
check "join: the late task did work" grep -q 'share: task=.* claims=[1-9]' join2.err

# 8. The job's end near (SLURM_JOB_END_TIME, as Slurm 23.02+ sets it): the tasks stop taking
# work that would not end before it and say so; TERM at the end; the same command again on
# fewer tasks finishes exactly.
end=$(($(date +%s) + 12))
SLURM_JOB_END_TIME=$end srun -N3 -n3 -J share-end "$FRUN" --results r-end -k -a in.share "${uneven[@]}" 2>end.err &
run=$!
sleep 5
scancel --signal=TERM "$(squeue -h -n share-end -o %i)" 2>/dev/null || true
wait "$run" || true
check "walltime: the tasks said they take no more work" grep -q 'no more work taken: the job ends in' end.err
if "$FRUN" merge r-end >/dev/null 2>&1; then fail "walltime: complete before the rerun"; fi
srun -N2 -n2 "$FRUN" --results r-end -k -a in.share "${uneven[@]}"
"$FRUN" merge r-end >merged
same "TERM at the job's end, then the same command on 2 tasks: merged == one frun -k" merged single.share

# 9. Slurm before 23.02 sets no SLURM_JOB_END_TIME: the job's end comes from squeue. A step
# with a one-minute limit and about 67 s of work for its 3 tasks: they stop taking work whose
# chunk would not end 10 s before the limit and say so; the same command again finishes exactly.
seq 20000 >in.wall
"$FRUN" -k -a in.wall "${each[@]}" >single.wall
slow_wall=(-j 1 -L 100 sh -c 'sleep 1; printf "r%s\n" "$@"' x)
srun -t 1 -N3 -n3 -J share-wall env -u SLURM_JOB_END_TIME "$FRUN" --results r-wall -k -a in.wall \
  "${slow_wall[@]}" 2>wall.err || true
check "walltime from squeue: the tasks said they take no more work" \
  grep -q 'no more work taken: the job ends in' wall.err
srun -N3 -n3 "$FRUN" --results r-wall -k -a in.wall "${slow_wall[@]}"
"$FRUN" merge r-wall >merged
same "walltime from squeue, then the same command again: merged == one frun -k" merged single.wall

if ((failures)); then
  echo "slurm: $failures failed" >&2
  exit 1
fi
echo "slurm: all passed"
