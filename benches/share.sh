#!/usr/bin/env bash
# Work sharing by claims against fixed shares, on a local Slurm cluster (tests/slurm/cluster.sh;
# three slurmd "nodes" on this machine, sharing its cores), side by side in one run:
#   slow   one task's command three times slower than the others' (sleep 0.3 s per batch
#          against 0.1 s, one job at a time per task): wall time of the run;
#   slowing one task's command ten times slower past record 20000 (1 s per batch against
#          0.1 s): its claims were sized at its earlier pace, and the others split them;
#   lost   kill -9 of one task's frun 2 s in: wall time until the merged output is whole (fixed
#          shares need the same command run again; claims finish in the one srun);
#   cpu    a CPU-bound job (awk) as 1 task and as 3 sharing by claims: total CPU time.
# Every merged output is checked against one single-machine frun -k, byte for byte.
#
# Usage: bash benches/share.sh   (RUNS=3; needs Debian's slurm-wlm). Writes
# benches/results/DATE-share.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
RUNS=${RUNS:-3}
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

seq 60000 >in
"$FRUN" -k -a in printf 'r%s\n' >single
# shellcheck disable=SC2016,SC2034  # expanded by each command's sh; used by name (slow)
uneven=(-j 1 -L 500 sh -c 'if [ "$SLURM_PROCID" = 0 ]; then sleep 0.3; else sleep 0.1; fi; printf "r%s\n" "$@"' x)
steady=(-j 1 -L 500 sh -c 'sleep 0.1; printf "r%s\n" "$@"' x)
# shellcheck disable=SC2016,SC2034  # expanded by each command's sh; used by name (slow)
slowing=(-j 1 -L 500 sh -c 'if [ "$SLURM_PROCID" = 0 ] && [ "$1" -gt 20000 ]; then sleep 1; else sleep 0.1; fi; printf "r%s\n" "$@"' x)
now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
check() {
  "$FRUN" merge "$1" >merged 2>/dev/null || { echo "share bench: $1 incomplete" >&2; exit 1; }
  cmp -s merged single || { echo "share bench: $1 differs" >&2; exit 1; }
}

# slow MODE [JOB]: one run with a slow task (JOB: the name of the command's array, uneven by
# default); prints its wall ms.
slow() {
  local dir=s-$1-$RANDOM t0
  local -n job=${2:-uneven}
  t0=$(now)
  srun -N3 -n3 "$FRUN" --share "$1" --results "$dir" -k -a in "${job[@]}"
  ms "$t0" "$(now)"
  check "$dir"
}

# lost MODE: one task killed 2 s in; prints the wall ms until the output is whole.
lost() {
  local dir=l-$1-$RANDOM t0 run p
  t0=$(now)
  srun -N3 -n3 "$FRUN" --share "$1" --results "$dir" -k -a in "${steady[@]}" 2>/dev/null &
  run=$!
  sleep 2
  for p in $(pgrep -f -- "--results $dir" || true); do
    if [ "$(cat /proc/"$p"/comm 2>/dev/null)" = frun ]; then kill -9 "$p"; break; fi
  done
  wait "$run" || true
  if ! "$FRUN" merge "$dir" >/dev/null 2>&1; then
    srun -N2 -n2 "$FRUN" --share "$1" --results "$dir" -k -a in "${steady[@]}"
  fi
  ms "$t0" "$(now)"
  check "$dir"
}

# shellcheck disable=SC2016  # awk's $1
prog='{ s = 0; for (i = 0; i < 300; i++) s += (i * $1) % 7; print s }'
seq 200000 >cpu.in
"$FRUN" -k -s -a cpu.in awk "$prog" >cpu.single
# cpu TASKS: CPU seconds of every task and its commands together.
cpu() {
  local n=$1 dir=c-$1-$RANDOM
  # shellcheck disable=SC2016  # expanded by each task's bash
  srun -N"$n" -n"$n" bash -c '"$@"; times >"cpu.$SLURM_PROCID"' task \
    "$FRUN" --share claims --results "$dir" -k -s -a cpu.in awk "$prog"
  "$FRUN" merge "$dir" >merged
  cmp -s merged cpu.single || { echo "share bench: cpu $n differs" >&2; exit 1; }
  cat cpu.[0-9]* | awk '{ for (f = 1; f <= 2; f++) { split($f, t, /[ms]/); s += t[1] * 60 + t[2] } }
    END { printf "%.3f\n", s }'
  rm -f cpu.[0-9]*
}

declare -a sf sc gf gc lf lc c1 c3
for ((r = 0; r < RUNS; r++)); do # alternate, so drift hits both alike
  sf+=("$(slow fixed)") sc+=("$(slow claims)")
  gf+=("$(slow fixed slowing)") gc+=("$(slow claims slowing)")
  lf+=("$(lost fixed)") lc+=("$(lost claims)")
  c1+=("$(cpu 1)") c3+=("$(cpu 3)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
msf=$(median "${sf[@]}") msc=$(median "${sc[@]}") mgf=$(median "${gf[@]}") mgc=$(median "${gc[@]}")
mlf=$(median "${lf[@]}") mlc=$(median "${lc[@]}")
mc1=$(median "${c1[@]}") mc3=$(median "${c3[@]}")

mkdir -p "$OUT_DIR"
out=$OUT_DIR/$(date -u +%F)-share.md
{
  echo "# Work sharing by claims against fixed shares (3 Slurm tasks)"
  echo
  echo "Input \`seq 60000\`, batches of 500 records (\`-L 500\`), one job at a time per task;"
  echo "every merged output checked against one \`frun -k\`. $RUNS runs each, alternating; medians."
  echo
  echo "| case | fixed shares | claims | claims / fixed | runs (fixed; claims) |"
  echo "|---|---|---|---|---|"
  echo "| one task 3× slower (wall ms) | $msf | $msc | $(ratio "$msc" "$msf")× | ${sf[*]}; ${sc[*]} |"
  echo "| one task 10× slower past record 20000 (wall ms) | $mgf | $mgc | $(ratio "$mgc" "$mgf")× | ${gf[*]}; ${gc[*]} |"
  echo "| one task killed 2 s in, until the output is whole (wall ms) | $mlf | $mlc | $(ratio "$mlc" "$mlf")× | ${lf[*]}; ${lc[*]} |"
  echo
  echo "The task that slows down holds claims sized at its earlier pace; the others, out of work,"
  echo "split off their unstarted chunks (\`split_off\` in \`--stats\`)."
  echo
  echo "Fixed shares after the kill: \`frun merge\` reports the run incomplete and the same command"
  echo "runs again (on 2 tasks); claims: the others take the lost task's open claims over in the one run."
  echo
  echo "CPU cost of sharing: \`awk\` (300 iterations per record) over \`seq 200000\`, \`-s\`:"
  echo
  echo "| tasks | CPU s (median) | runs |"
  echo "|---|---|---|"
  echo "| 1 | $mc1 | ${c1[*]} |"
  echo "| 3 sharing by claims | $mc3 | ${c3[*]} |"
  echo
  echo "3 tasks / 1 task CPU: **$(ratio "$mc3" "$mc1")×**."
  echo
  echo "Machine: $(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'),"
  echo "$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r),"
  # shellcheck source=/dev/null
  echo "$(. /etc/os-release && echo "$PRETTY_NAME"), $(srun --version), $("$FRUN" --version | head -1)."
  echo "The three Slurm nodes are slurmd processes on this one machine (loopback), sharing its cores."
} >"$out"
cat "$out"
