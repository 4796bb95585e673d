#!/usr/bin/env bash
# `frun parallel` against GNU Parallel side by side on the same inputs: one job per value (`true`
# and `echo`), `-X` (as many values per command line as fit), and `--pipe` (blocks of stdin to
# `wc -l`); frun's own flags (`frun -l 1 true`, `frun true`) on the same values as the reference
# for what the parallel personality may cost. Each row is one hyperfine call running the
# commands alternately; the report gives each one's median wall time, its rate (values or lines
# per second) and frun's speed-up over GNU Parallel. Outputs are checked against each other
# first (untimed), so a broken frun cannot post a good number. Needs hyperfine and GNU Parallel.
#
# Usage: bash benches/vs-gnu.sh
# Knobs (environment):
#   JOBS_N=1000      values for the one-job-per-value rows
#   X_N=200000       values for the -X rows
#   PIPE_LINES=2000000  lines for the --pipe row (seq PIPE_LINES)
#   RUNS=5           runs of each command per row (medians are over these)
#   FRUN=path        the frun binary (default target/release/frun, built if missing)
#   QUICK=1          smoke run: JOBS_N=50, X_N=5000, PIPE_LINES=50000, RUNS=2; report to results/quick/
#   OUT_DIR=...      where the .md and raw/ JSON go (default benches/results)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh" vs-gnu

if [[ $QUICK == 1 ]]; then
    JOBS_N=${JOBS_N:-50} X_N=${X_N:-5000} PIPE_LINES=${PIPE_LINES:-50000} RUNS=${RUNS:-2}
else
    JOBS_N=${JOBS_N:-1000} X_N=${X_N:-200000} PIPE_LINES=${PIPE_LINES:-2000000} RUNS=${RUNS:-5}
fi
have hyperfine || die "hyperfine is needed (cargo install hyperfine --locked)"
have python3 || die "python3 is needed for the report"
gnu=$(command -v parallel || true)
if [[ -z $gnu ]] || ! "$gnu" --version 2>/dev/null | grep -q 'GNU parallel'; then
    die "GNU Parallel is needed"
fi
FRUN=${FRUN:-$root/target/release/frun}
if [[ ! -x $FRUN ]]; then
    (cd "$root" && cargo build --quiet --release)
fi

start_work frun-vs-gnu
stamp=$(date -u +%F)-vs-gnu
init_results "$stamp"
cp "$FRUN" "$work/frun"
f=$work/frun
seq "$JOBS_N" >"$work/jobs.txt"
seq "$X_N" >"$work/x.txt"
seq "$PIPE_LINES" >"$work/pipe.txt"

# ---------------------------------------------------------------- correctness (untimed)
same() { # NAME CMD_FRUN CMD_GNU: both print the same lines (as sorted sets)
    check "$1" "$(bash -c "$3" | sort | sum_of)" "$(bash -c "$2" | sort | sum_of)"
}
same "echo per value: same lines" "$f parallel echo :::: $work/jobs.txt" "$gnu echo :::: $work/jobs.txt"
same "-X echo: the same values" "$f parallel -X echo :::: $work/x.txt | tr ' ' '\n'" \
    "$gnu -X echo :::: $work/x.txt | tr ' ' '\n'"
check "--pipe wc -l: counts add up" "$PIPE_LINES" \
    "$("$f" parallel --pipe wc -l <"$work/pipe.txt" | awk '{ s += $1 } END { print s }')"
check "GNU --pipe wc -l: counts add up" "$PIPE_LINES" \
    "$("$gnu" --pipe wc -l <"$work/pipe.txt" | awk '{ s += $1 } END { print s }')"

# ---------------------------------------------------------------- timed
# bench NAME COUNT CMD...: one hyperfine call, the commands alternating run by run.
bench() {
    local name=$1 count=$2 slug
    shift 2
    slug=$(tr -c 'A-Za-z0-9\n' '-' <<<"$name" | tr -s '-')
    slug=${slug%-}
    log "$name"
    hyperfine --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$raw_dir/$stamp-$slug.json" \
        "$@" >/dev/null
    row "$name" "$count" "$raw_dir/$stamp-$slug.json"
}
run_all() {
    busy_check "before"
    bench "one job per value: true" "$JOBS_N" \
        "$f parallel true :::: $work/jobs.txt" "$gnu true :::: $work/jobs.txt" "$f -l 1 -a $work/jobs.txt true"
    bench "one job per value: echo" "$JOBS_N" \
        "$f parallel echo :::: $work/jobs.txt" "$gnu echo :::: $work/jobs.txt"
    bench "-X true" "$X_N" "$f parallel -X true :::: $work/x.txt" "$gnu -X true :::: $work/x.txt" \
        "$f -a $work/x.txt true"
    bench "-X echo" "$X_N" "$f parallel -X echo :::: $work/x.txt" "$gnu -X echo :::: $work/x.txt"
    bench "--pipe wc -l" "$PIPE_LINES" "bash -c '$f parallel --pipe wc -l <$work/pipe.txt'" \
        "bash -c '$gnu --pipe wc -l <$work/pipe.txt'"
    busy_check "after"
}
unless_check_failed run_all

{
    machine_rows
    printf 'frun\t%s\n' "$("$f" --version 2>&1 | head -n 1) ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
    printf 'GNU Parallel\t%s\n' "$("$gnu" --version | head -n 1)"
    printf 'hyperfine\t%s\n' "$(hyperfine --version)"
    printf 'settings\tJOBS_N=%s X_N=%s PIPE_LINES=%s RUNS=%s\n' "$JOBS_N" "$X_N" "$PIPE_LINES" "$RUNS"
} >"$work/machine.tsv"
mkdir -p "$OUT_DIR"
notes_file=$work/notes.txt
: >"$notes_file"
for n in ${notes[@]+"${notes[@]}"}; do printf '%s\n' "$n" >>"$notes_file"; done
python3 - "$manifest" "$checks" "$work/machine.tsv" "$notes_file" "$OUT_DIR/$stamp.md" "$work" "$gnu" <<'PY'
import json, statistics, sys
manifest, checks, machine, notes, out, work, gnu_path = sys.argv[1:]
def short(cmd):
    return cmd.replace(work + "/", "").replace("bash -c ", "")
lines = ["# frun parallel against GNU Parallel", "", "## Results", "",
         "| workload | command | median | min – max | rate | GNU Parallel / this |",
         "|---|---|---:|---:|---:|---:|"]
for row in open(manifest):
    name, count, path = row.rstrip("\n").split("\t")
    res = json.load(open(path))["results"]
    med = {r["command"]: statistics.median(r["times"]) for r in res}
    gnu = next((m for c, m in med.items() if gnu_path + " " in c), None)
    for r in res:
        m = med[r["command"]]
        ratio = f"{gnu / m:.1f}×" if gnu else ""
        lines.append(f"| {name} | `{short(r['command'])}` | {m * 1000:.1f} ms | "
                     f"{min(r['times']) * 1000:.1f} – {max(r['times']) * 1000:.1f} ms | "
                     f"{int(count) / m:,.0f}/s | {ratio} |")
lines += ["", "rate: values (one job per value, -X) or lines (--pipe) per second of median wall time. "
          "GNU Parallel / this: GNU Parallel's median over this command's (above 1: this one is faster).",
          "", "## Correctness (untimed)", "", "| check | result |", "|---|---|"]
for row in open(checks):
    n, s, *_ = row.rstrip("\n").split("\t")
    lines.append(f"| {n} | {s} |")
lines += ["", "## Machine", "", "| | |", "|---|---|"]
for row in open(machine):
    k, v = row.rstrip("\n").split("\t", 1)
    lines.append(f"| {k} | {v} |")
ns = [n.strip() for n in open(notes) if n.strip()]
if ns:
    lines += ["", "## Notes", ""] + [f"- {n}" for n in ns]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
log "wrote $OUT_DIR/$stamp.md and $raw_dir/$stamp-*.json"
die_if_check_failed "a correctness check failed (see $OUT_DIR/$stamp.md)"
