# shellcheck shell=bash
# What benches/run.sh and benches/compare.sh share: logging and notes, the scratch directory,
# frun.bash assembly, the result files, the untimed correctness checks, the busy-machine check,
# the machine details and the report step. Sourced by both, after `set -euo pipefail`, as
#   source "$here/lib.sh" TAG
# where TAG names the script in its log lines ([TAG] ...). Sourcing defines functions,
# sets the shared settings (LINES, QUICK, WARMUP, OUT_DIR, the timeouts) and starts the (empty) notes;
# the script then calls, in order:
#   start_work NAME          scratch directory $work, removed on exit
#   init_results STAMP       $stamp, $raw_dir and the empty $manifest and $checks
#   check / sum_of / row     correctness rows and benchmark rows
#   unless_check_failed CMD  CMD (the benchmarks) unless a check failed (FORCE=1: anyway)
#   machine_rows             the machine rows both reports open their Machine table with
#   write_report WRITER ...  the notes to a file, then WRITER (a .py) writes $OUT_DIR/$stamp.md
#   die_if_check_failed MSG  exit non-zero after the report when a check failed

log_tag=${1:?usage: source lib.sh TAG}

# The settings both scripts take (their headers list them): LINES, the size of the input both
# time frun on (seq LINES); QUICK=1, a smoke run on small inputs, without warm-up, whose report
# goes to results/quick/ (beside this file, as beside the scripts); the timeouts.
QUICK=${QUICK:-0}
# shellcheck disable=SC2034 # WARMUP is for the scripts' hyperfine calls
if [[ $QUICK == 1 ]]; then
    LINES=${LINES:-200000}
    WARMUP=0
    OUT_DIR=${OUT_DIR:-$(dirname "${BASH_SOURCE[0]}")/results/quick}
else
    LINES=${LINES:-10000000}
    WARMUP=1
    OUT_DIR=${OUT_DIR:-$(dirname "${BASH_SOURCE[0]}")/results}
fi
CHECK_TIMEOUT=${CHECK_TIMEOUT:-300}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-900}

log() { printf '[%s] %s\n' "$log_tag" "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

# Notes on skipped tools, failed runs or checks and busy-machine warnings end up under the table.
notes=()
note() {
    log "note: $*"
    notes+=("$*")
}

have() { command -v "$1" >/dev/null 2>&1; }

version() { # first line of `$@`, or "not installed"
    if have "$1"; then
        "$@" 2>&1 | head -n1 || true
    else
        echo "not installed"
    fi
}

# start_work NAME: a scratch directory for the inputs and the report's input files, in $work.
start_work() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap 'rm -rf "$work"' EXIT
}

# assemble_frun_bash CHECKOUT TAG OUT LIBFRUN_SO: the checkout's frun.bash, assembled by its own
# packaging/assemble-bash.sh around the builtin LIBFRUN_SO for this host's glibc.
assemble_frun_bash() {
    local src=$1 tag=$2 out=$3 so=$4 version
    version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/Cargo.toml" | head -n 1)
    bash "$src/packaging/assemble-bash.sh" "$src/packaging/frun.bash.in" "$version" "$tag" \
        "$out" "$(getconf GNU_LIBC_VERSION | awk '{print $2}')=$so"
}

# init_results STAMP: the report's name ($OUT_DIR/STAMP.md, raw/STAMP-*) and its input files.
init_results() {
    stamp=$1
    raw_dir="$OUT_DIR/raw"
    mkdir -p "$raw_dir"
    manifest="$work/manifest.tsv"
    checks="$work/checks.tsv"
    : >"$manifest"
    : >"$checks"
}

# row FIELD...: one tab-separated row of the manifest (the fields are the script's own).
row() {
    local IFS=$'\t'
    printf '%s\n' "$*" >>"$manifest"
}

# ---------------------------------------------------------------- correctness (not timed)
# check NAME EXPECTED ACTUAL [DETAIL]
check() {
    local status=FAIL
    [[ $2 == "$3" ]] && status=ok
    printf '%s\t%s\t%s\n' "$1" "$status" "${4:-}" >>"$checks"
    log "check $status: $1"
}

sum_of() { cksum | cut -d' ' -f1,2; }

check_failed() { grep -q $'\tFAIL\t' "$checks"; }

# unless_check_failed CMD...: runs CMD (the benchmarks) unless a correctness check failed.
unless_check_failed() {
    if check_failed && [[ ${FORCE:-0} != 1 ]]; then
        note "a correctness check failed: benchmarks not run (FORCE=1 runs them anyway)"
    else
        "$@"
    fi
}

# die_if_check_failed MESSAGE: the last step, once the report is written.
die_if_check_failed() {
    if check_failed; then
        die "$1"
    fi
}

# ---------------------------------------------------------------- busy machine
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

# ---------------------------------------------------------------- machine and report
# machine_rows: the key<TAB>value rows of the machine itself (and how idle it was), which each
# script follows with the rows of its own tools, builds and settings into $work/machine.tsv.
machine_rows() {
    local cpu_model mem_total distro
    cpu_model=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
    mem_total=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
    # shellcheck source=/dev/null
    distro=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}") || echo unknown)
    printf 'date\t%s\n' "$(date -u '+%F %T UTC')"
    printf 'host\t%s\n' "$(hostname)"
    printf 'nproc\t%s\n' "$(nproc)"
    printf 'CPU\t%s\n' "${cpu_model:-unknown}"
    printf 'memory\t%s\n' "${mem_total:-unknown}"
    printf 'kernel\t%s\n' "$(uname -r)"
    printf 'distro\t%s\n' "$distro"
    printf 'ARG_MAX\t%s\n' "$(getconf ARG_MAX)"
    printf 'CPU idle\t%s\n' "${idle_log%; }"
}

# write_report WRITER [ARG...]: the notes to a file, then WRITER (report.py, compare.py) turns
# the manifest, checks, $work/machine.tsv and notes, plus ARG..., into $OUT_DIR/$stamp.md.
write_report() {
    local writer=$1 notes_file="$work/notes.txt" out="$OUT_DIR/$stamp.md" n
    shift
    : >"$notes_file"
    for n in ${notes[@]+"${notes[@]}"}; do printf '%s\n' "$n" >>"$notes_file"; done
    python3 "$writer" --manifest "$manifest" --checks "$checks" --machine "$work/machine.tsv" \
        --notes "$notes_file" "$@" --out "$out"
    log "wrote $out and $raw_dir/$stamp-*.json"
}
