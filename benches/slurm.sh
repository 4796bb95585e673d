#!/usr/bin/env bash
# What splitting one run over Slurm tasks costs: the same CPU-bound job run as one task and as
# three (srun -N3 -n3 --results DIR, then frun merge DIR), on a local cluster
# (tests/slurm/cluster.sh). The three fake nodes share this machine's cores, so this measures
# overhead — total CPU time of every task and its commands — not speed-up. Each task reports its
# own CPU time (bash's `times`: the shell and everything it waited for, frun and its commands
# included). The merged output must equal the single-machine frun -k output byte for byte.
#
# Usage: bash benches/slurm.sh   (RUNS=5 LINES=200000 ITER=200; needs Debian's slurm-wlm)
# Writes benches/results/DATE-slurm.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
RUNS=${RUNS:-5}
LINES=${LINES:-200000}
ITER=${ITER:-200}
OUT_DIR=${OUT_DIR:-$here/results}

if ! command -v srun >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm >/dev/null
fi
(cd "$root" && cargo build --release -q)
FRUN=$root/target/release/frun
work=$(mktemp -d)
cleanup() {
  bash "$root/tests/slurm/cluster.sh" stop "$work/cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT
eval "$(bash "$root/tests/slurm/cluster.sh" start "$work/cluster")"
export SLURM_CONF
cd "$work"

seq "$LINES" >in
# CPU-bound, one output line per record (so the merged output can be compared exactly).
prog="{ s = 0; for (i = 0; i < $ITER; i++) s += (i * \$1) % 7; print s }"
"$FRUN" -k -s -a in awk "$prog" >single

# run TASKS: one srun of the job; prints the CPU seconds of all tasks together, and checks the
# merged output.
run() {
  local n=$1 dir=r-$1-$RANDOM
  # shellcheck disable=SC2016  # expanded by each task's bash
  srun -N"$n" -n"$n" bash -c '"$@"; times >"cpu.$SLURM_PROCID"' task \
    "$FRUN" --results "$dir" -k -s -a in awk "$prog"
  "$FRUN" merge "$dir" >merged
  cmp -s merged single || { echo "slurm bench: $n-task output differs" >&2; exit 1; }
  # `times`: line 1 the shell, line 2 its children; "0m1.234s 0m0.056s" each.
  cat cpu.* | awk '{ for (f = 1; f <= 2; f++) { split($f, t, /[ms]/); s += t[1] * 60 + t[2] } }
    END { printf "%.3f\n", s }'
  rm -rf "$dir" cpu.*
}

one=() three=()
for ((r = 0; r < RUNS; r++)); do # alternate, so drift hits both alike
  one+=("$(run 1)")
  three+=("$(run 3)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m1=$(median "${one[@]}")
m3=$(median "${three[@]}")
ratio=$(awk -v a="$m3" -v b="$m1" 'BEGIN { printf "%.3f", a / b }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.10) ? "within" : "OVER" }')

mkdir -p "$OUT_DIR"
out=$OUT_DIR/$(date -u +%F)-slurm.md
{
  echo "# Slurm: one task against three, total CPU time"
  echo
  echo "Job: \`frun --results DIR -k -s -a in awk '$prog'\` over \`seq $LINES\`; merged output"
  echo "checked against one \`frun -k\` byte for byte in every run. CPU time is the sum over tasks"
  echo "of bash's \`times\` (the task's shell and everything it waited for). $RUNS runs each,"
  echo "alternating; medians."
  echo
  echo "| tasks | CPU s (median) | runs |"
  echo "|---|---|---|"
  echo "| 1 (\`srun -N1 -n1\`) | $m1 | ${one[*]} |"
  echo "| 3 (\`srun -N3 -n3\`) | $m3 | ${three[*]} |"
  echo
  echo "3-task / 1-task CPU: **${ratio}×** ($verdict the ≤ 1.10× target)."
  echo
  echo "Machine: $(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'),"
  echo "$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r),"
  # shellcheck source=/dev/null
  echo "$(. /etc/os-release && echo "$PRETTY_NAME"), $(srun --version), $("$FRUN" --version | head -1),"
  echo "awk is $(basename "$(readlink -f "$(command -v awk)")"). The three Slurm nodes are slurmd processes on this"
  echo "one machine (loopback), sharing its cores."
} >"$out"
cat "$out"
