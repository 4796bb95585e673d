#!/usr/bin/env bash
# Two builds of frun side by side on four of run.sh's workloads — start-up (`frun echo` on one
# line), `frun true`, `frun -s wc -l` and frun.bash's `frun f` — to show that a change kept their speed. Each checkout's release
# binary and frun.bash are built from that checkout; both run the same inputs, and their runs
# alternate: each round is one hyperfine call with both commands, in the opposite order to the
# round before, so drift on the machine hits both alike. See benches/README.md.
#
# Usage: bash benches/compare.sh BASE_CHECKOUT [NEW_CHECKOUT]   (NEW defaults to this checkout)
#
# Knobs (environment):
#   LINES=10000000      lines of input (seq LINES), as in run.sh
#   RUNS=10             rounds for the /bin/true and bash-function rows (each round runs both builds once)
#   FAST_RUNS=30        rounds for the wc -l row (~25 ms a run: cheap and noisy)
#   QUICK=1             smoke run: LINES=200000, RUNS=2, FAST_RUNS=3, no warm-up; results go to results/quick/
#   OUT_DIR=...         where the .md and raw/ JSON go (default benches/results)
#   BASE_TARGET_DIR     cargo target directory for the base build (default BASE_CHECKOUT/target)
#   NEW_TARGET_DIR      the same for the new build (default $CARGO_TARGET_DIR, else NEW_CHECKOUT/target)
#   CHECK_TIMEOUT=300   seconds before a correctness check counts as hung
#   BENCH_TIMEOUT=900   seconds before one hyperfine call (one round of one row) is cut
#   FORCE=1             benchmark even when a correctness check failed
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh" compare

usage="usage: bash benches/compare.sh BASE_CHECKOUT [NEW_CHECKOUT]"
(($# >= 1 && $# <= 2)) || {
    echo "$usage" >&2
    exit 2
}
base=$(cd "$1" && pwd)
new=$(cd "${2:-$root}" && pwd)

if [[ $QUICK == 1 ]]; then
    RUNS=${RUNS:-2}
    FAST_RUNS=${FAST_RUNS:-3}
else
    RUNS=${RUNS:-10}
    FAST_RUNS=${FAST_RUNS:-30}
fi
BASE_TARGET_DIR=${BASE_TARGET_DIR:-$base/target}
NEW_TARGET_DIR=${NEW_TARGET_DIR:-${CARGO_TARGET_DIR:-$new/target}}
((RUNS >= 1 && FAST_RUNS >= 1)) || {
    echo "RUNS and FAST_RUNS must be at least 1" >&2
    exit 2
}

export PATH="$HOME/.cargo/bin:$PATH"
have cargo || die "cargo is needed to build frun"
have python3 || die "python3 is needed for the report"
have hyperfine || die "hyperfine is needed (bash benches/run.sh installs it, or: cargo install hyperfine --locked)"

# ---------------------------------------------------------------- build
start_work frun-compare

# build NAME CHECKOUT TARGET_DIR: the release binary and a frun.bash around the checkout's own
# builtin (as run.sh builds them), copied to $work/NAME so a rebuild cannot swap them mid-run.
build() {
    local name=$1 src=$2 target=$3
    log "building $name: $src (release binary, then the bash builtin)"
    mkdir -p "$work/$name"
    (cd "$src" && CARGO_TARGET_DIR=$target cargo build --release --quiet) >&2
    [[ -x $target/release/frun ]] || die "no frun binary at $target/release/frun"
    cp "$target/release/frun" "$work/$name/frun"
    (cd "$src" && CARGO_TARGET_DIR=$target cargo rustc --release --quiet --lib --features bash --crate-type cdylib) >&2
    cp "$target/release/libfrun.so" "$work/$name/libfrun.so"
    assemble_frun_bash "$src" "bench-$name" "$work/$name/frun.bash" "$work/$name/libfrun.so"
}
build old "$base" "$BASE_TARGET_DIR"
build new "$new" "$NEW_TARGET_DIR"

# What each build is: its commit (with -dirty for uncommitted changes) and what it says it is.
describe() { git -C "$1" describe --always --dirty --abbrev=12 2>/dev/null || echo "not a git checkout"; }
old_rev=$(describe "$base")
new_rev=$(describe "$new")
if cmp -s "$work/old/frun" "$work/new/frun" && cmp -s "$work/old/libfrun.so" "$work/new/libfrun.so"; then
    note "the two builds are byte for byte the same (binary and builtin): any difference below is noise"
fi

# ---------------------------------------------------------------- inputs
cd "$work"
log "generating inputs in $work"
seq "$LINES" >lines.txt
echo 1 >one.txt

init_results "$(date +%F)-refactor-compare"

# ---------------------------------------------------------------- correctness (not timed)
lines_sum=$(sum_of <lines.txt)

log "correctness checks (each build's output against seq)"
for b in old new; do
    stats=$(timeout -k 10 "$CHECK_TIMEOUT" "./$b/frun" -v true <lines.txt 2>&1 >/dev/null) || stats="exit $?: $stats"
    got=$(grep -o 'records=[0-9]*' <<<"$stats" || true)
    check "$b: frun -v true < lines.txt: stats say records=$LINES" "records=$LINES" "$got" "$stats"

    got=$(timeout -k 10 "$CHECK_TIMEOUT" "./$b/frun" -s wc -l <lines.txt | awk '{ s += $1 } END { print s + 0 }') || got=error
    check "$b: frun -s wc -l < lines.txt: counts add up to $LINES" "$LINES" "$got"

    # shellcheck disable=SC2016 # for the bash that runs it
    got=$(timeout -k 10 "$CHECK_TIMEOUT" bash -c 'source "$1"; f() { printf "%s\n" "$@"; }; frun -k f' _ "./$b/frun.bash" \
        <lines.txt | sum_of) || got=error
    check "$b: frun.bash: frun -k f (a bash function) < lines.txt = seq $LINES byte for byte" "$lines_sum" "$got"
done

# ---------------------------------------------------------------- benchmarks
# The manifest's rows (lib.sh's row): ID WORKLOAD ROUNDS OLD_COMMAND NEW_COMMAND STATUS JSONS

# compare ID WORKLOAD ROUNDS COMMAND: COMMAND holds @B@ where the build's directory goes
# (./old or ./new). Round r is one hyperfine call running both, old first when r is odd; the
# first round also warms both up. The rounds' JSON files are merged by compare.py.
compare() {
    local id=$1 workload=$2 rounds=$3 cmd=$4 r warmup order json jsons=()
    local old_cmd=${cmd//@B@/.\/old} new_cmd=${cmd//@B@/.\/new}
    log "[$workload] $rounds rounds: $old_cmd  against  $new_cmd"
    for ((r = 1; r <= rounds; r++)); do
        warmup=0
        ((r == 1)) && warmup=$WARMUP
        json="$work/$id-$r.json"
        if ((r % 2)); then
            order=(-n old "$old_cmd" -n new "$new_cmd")
        else
            order=(-n new "$new_cmd" -n old "$old_cmd")
        fi
        # timeout signals hyperfine's whole process group, so a hung command goes too.
        if ! timeout -k 10 "$BENCH_TIMEOUT" hyperfine --style basic --warmup "$warmup" --runs 1 \
            --export-json "$json" "${order[@]}" >&2; then
            note "$id failed in round $r (non-zero exit, hyperfine error or over ${BENCH_TIMEOUT} s): $cmd"
            row "$id" "$workload" "$rounds" "$old_cmd" "$new_cmd" fail ""
            return 0
        fi
        jsons+=("$json")
    done
    local IFS=,
    row "$id" "$workload" "$rounds" "$old_cmd" "$new_cmd" ok "${jsons[*]}"
}

# The same commands and sizes as run.sh's true-frun, pipe-frun and bash-frun rows.
run_benchmarks() {
    busy_check "before the benchmarks"
    compare startup-frun "start-up, 1-line input" "$FAST_RUNS" "@B@/frun echo < one.txt"
    compare true-frun "/bin/true, default flags" "$RUNS" "@B@/frun true < lines.txt"
    compare pipe-frun "stdin mode: wc -l" "$FAST_RUNS" "@B@/frun -s wc -l < lines.txt"
    local fdef='f() { for x; do :; done; }'
    compare bash-frun "bash function $fdef" "$RUNS" "bash -c 'source @B@/frun.bash; $fdef; frun f < lines.txt'"
    busy_check "after the benchmarks"
}

unless_check_failed run_benchmarks

# ---------------------------------------------------------------- machine and report
{
    machine_rows
    printf 'old build\t%s (%s)\n' "$old_rev" "$(./old/frun --version 2>&1 | head -n1)"
    printf 'new build\t%s (%s)\n' "$new_rev" "$(./new/frun --version 2>&1 | head -n1)"
    printf 'hyperfine\t%s\n' "$(version hyperfine --version)"
    printf 'rustc\t%s\n' "$(cd "$new" && version rustc --version)"
    printf 'settings\tLINES=%s RUNS=%s FAST_RUNS=%s warm-up=%s QUICK=%s\n' \
        "$LINES" "$RUNS" "$FAST_RUNS" "$WARMUP" "$QUICK"
    printf 'inputs\tlines.txt = seq %s\n' "$LINES"
} >"$work/machine.tsv"

write_report "$here/compare.py" --raw "$raw_dir/$stamp"
die_if_check_failed "a correctness check failed (see the report): the numbers are not valid"
