#!/usr/bin/env bash
# Two builds of frun side by side on three of run.sh's workloads — `frun true`, `frun -s wc -l`
# and frun.bash's `frun f` — to show that a change kept their speed. Each checkout's release
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

usage="usage: bash benches/compare.sh BASE_CHECKOUT [NEW_CHECKOUT]"
(($# >= 1 && $# <= 2)) || {
    echo "$usage" >&2
    exit 2
}
base=$(cd "$1" && pwd)
new=$(cd "${2:-$root}" && pwd)

QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then
    LINES=${LINES:-200000}
    RUNS=${RUNS:-2}
    FAST_RUNS=${FAST_RUNS:-3}
    WARMUP=0
    OUT_DIR=${OUT_DIR:-$here/results/quick}
else
    LINES=${LINES:-10000000}
    RUNS=${RUNS:-10}
    FAST_RUNS=${FAST_RUNS:-30}
    WARMUP=1
    OUT_DIR=${OUT_DIR:-$here/results}
fi
BASE_TARGET_DIR=${BASE_TARGET_DIR:-$base/target}
NEW_TARGET_DIR=${NEW_TARGET_DIR:-${CARGO_TARGET_DIR:-$new/target}}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-300}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-900}
((RUNS >= 1 && FAST_RUNS >= 1)) || {
    echo "RUNS and FAST_RUNS must be at least 1" >&2
    exit 2
}

log() { printf '[compare] %s\n' "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

# Notes on failed rounds or checks end up under the table.
notes=()
note() {
    log "note: $*"
    notes+=("$*")
}

have() { command -v "$1" >/dev/null 2>&1; }

export PATH="$HOME/.cargo/bin:$PATH"
have cargo || die "cargo is needed to build frun"
have python3 || die "python3 is needed for the report"
have hyperfine || die "hyperfine is needed (bash benches/run.sh installs it, or: cargo install hyperfine --locked)"

# ---------------------------------------------------------------- build
work=$(mktemp -d "${TMPDIR:-/tmp}/frun-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

# build NAME CHECKOUT TARGET_DIR: the release binary and a frun.bash around the checkout's own
# builtin (as run.sh builds them), copied to $work/NAME so a rebuild cannot swap them mid-run.
build() {
    local name=$1 src=$2 target=$3 version
    log "building $name: $src (release binary, then the bash builtin)"
    mkdir -p "$work/$name"
    (cd "$src" && CARGO_TARGET_DIR=$target cargo build --release --quiet) >&2
    [[ -x $target/release/frun ]] || die "no frun binary at $target/release/frun"
    cp "$target/release/frun" "$work/$name/frun"
    (cd "$src" && CARGO_TARGET_DIR=$target cargo rustc --release --quiet --lib --features bash --crate-type cdylib) >&2
    cp "$target/release/libfrun.so" "$work/$name/libfrun.so"
    version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/Cargo.toml" | head -n 1)
    bash "$src/packaging/assemble-bash.sh" "$src/packaging/frun.bash.in" "$version" "bench-$name" \
        "$work/$name/frun.bash" "$(getconf GNU_LIBC_VERSION | awk '{print $2}')=$work/$name/libfrun.so"
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

stamp="$(date +%F)-refactor-compare"
raw_dir="$OUT_DIR/raw"
mkdir -p "$raw_dir"
manifest="$work/manifest.tsv"
checks="$work/checks.tsv"
: >"$manifest"
: >"$checks"

# ---------------------------------------------------------------- correctness (not timed)
# check NAME EXPECTED ACTUAL [DETAIL]
check() {
    local status=FAIL
    [[ $2 == "$3" ]] && status=ok
    printf '%s\t%s\t%s\n' "$1" "$status" "${4:-}" >>"$checks"
    log "check $status: $1"
}

sum_of() { cksum | cut -d' ' -f1,2; }
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
# How idle the CPUs are over 2 s (percent): a benchmark on a busy machine is noise.
cpu_idle_pct() {
    local a b i total=0 idle
    read -r -a a < <(head -n1 /proc/stat)
    sleep 2
    read -r -a b < <(head -n1 /proc/stat)
    for i in 1 2 3 4 5 6 7 8; do total=$((total + ${b[i]:-0} - ${a[i]:-0})); done
    idle=$((b[4] - a[4] + b[5] - a[5]))
    echo $((total > 0 ? 100 * idle / total : 100))
}
idle_log=""
busy_check() { # WHEN
    local idle load
    idle=$(cpu_idle_pct)
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    idle_log+="$1: ${idle}% idle, load $load; "
    if ((idle < 90)); then
        note "WARNING: the machine was busy $1 (${idle}% idle over 2 s, load $load): other processes skew these numbers; rerun on a quiet machine"
    fi
}

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

# row ID WORKLOAD ROUNDS OLD_COMMAND NEW_COMMAND STATUS JSONS
row() {
    local IFS=$'\t'
    printf '%s\n' "$*" >>"$manifest"
}

# The same commands and sizes as run.sh's true-frun, pipe-frun and bash-frun rows.
run_benchmarks() {
    busy_check "before the benchmarks"
    compare true-frun "/bin/true, default flags" "$RUNS" "@B@/frun true < lines.txt"
    compare pipe-frun "stdin mode: wc -l" "$FAST_RUNS" "@B@/frun -s wc -l < lines.txt"
    local fdef='f() { for x; do :; done; }'
    compare bash-frun "bash function $fdef" "$RUNS" "bash -c 'source @B@/frun.bash; $fdef; frun f < lines.txt'"
    busy_check "after the benchmarks"
}

if grep -q $'\tFAIL\t' "$checks" && [[ ${FORCE:-0} != 1 ]]; then
    note "a correctness check failed: benchmarks not run (FORCE=1 runs them anyway)"
else
    run_benchmarks
fi

# ---------------------------------------------------------------- machine and report
version() { # first line of `$@`, or "not installed"
    if have "$1"; then
        "$@" 2>&1 | head -n1 || true
    else
        echo "not installed"
    fi
}
cpu_model=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
mem_total=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
# shellcheck source=/dev/null
distro=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}") || echo unknown)
machine="$work/machine.tsv"
{
    printf 'date\t%s\n' "$(date -u '+%F %T UTC')"
    printf 'host\t%s\n' "$(hostname)"
    printf 'nproc\t%s\n' "$(nproc)"
    printf 'CPU\t%s\n' "${cpu_model:-unknown}"
    printf 'memory\t%s\n' "${mem_total:-unknown}"
    printf 'kernel\t%s\n' "$(uname -r)"
    printf 'distro\t%s\n' "$distro"
    printf 'ARG_MAX\t%s\n' "$(getconf ARG_MAX)"
    printf 'CPU idle\t%s\n' "${idle_log%; }"
    printf 'old build\t%s (%s)\n' "$old_rev" "$(./old/frun --version 2>&1 | head -n1)"
    printf 'new build\t%s (%s)\n' "$new_rev" "$(./new/frun --version 2>&1 | head -n1)"
    printf 'hyperfine\t%s\n' "$(version hyperfine --version)"
    printf 'rustc\t%s\n' "$(cd "$new" && version rustc --version)"
    printf 'settings\tLINES=%s RUNS=%s FAST_RUNS=%s warm-up=%s QUICK=%s\n' \
        "$LINES" "$RUNS" "$FAST_RUNS" "$WARMUP" "$QUICK"
    printf 'inputs\tlines.txt = seq %s\n' "$LINES"
} >"$machine"

notes_file="$work/notes.txt"
: >"$notes_file"
for n in ${notes[@]+"${notes[@]}"}; do printf '%s\n' "$n" >>"$notes_file"; done

out="$OUT_DIR/$stamp.md"
python3 "$here/compare.py" --manifest "$manifest" --checks "$checks" --machine "$machine" \
    --notes "$notes_file" --raw "$raw_dir/$stamp" --out "$out"
log "wrote $out and $raw_dir/$stamp-*.json"

if grep -q $'\tFAIL\t' "$checks"; then
    die "a correctness check failed (see the report): the numbers are not valid"
fi
