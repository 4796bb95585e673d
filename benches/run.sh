#!/usr/bin/env bash
# frun benchmark suite: frun against xargs, GNU Parallel, rust-parallel and a C spawn loop
# (the physical limit), all on the same inputs in one run. See benches/README.md.
#
# Knobs (environment):
#   LINES=10000000      lines for the fast tools (seq LINES)
#   SMALL_LINES=200000  lines for GNU Parallel (its lines/s is taken from this)
#   TINY_LINES=5000     lines for rust-parallel (one process per line, ~1k lines/s)
#   JOB_LINES=20000     values for the one-job-per-value rows (frun parallel against GNU Parallel)
#   XJOB_LINES=100000   values for the -X rows (all on one command line: keep it under ARG_MAX)
#   XZ_LINES=14000000   lines (seq, ~115 MB) for the compression rows: frun -k -b 1Mi gzip -1
#                       against pigz, frun -k -b 32Mi xz -T1 against xz -T2
#   LONG_MB=500         megabytes of the one-record rows (one line without a newline, through
#                       --block, --pipe and --lb, from a pipe and from a file, and at a quarter
#                       and a half of that size to show the cost is linear in it)
#   FILES=2000          files for the sha256sum workload, FILE_BYTES=131072 random bytes each (CPU-bound hashing)
#   RUNS=3              hyperfine runs per command (at least 1)
#   STARTUP_RUNS=30     runs for the start-up and sha256sum workloads (cheap, noisy)
#   ECHO_OUTPUT=null    where echo/printf output goes: null (/dev/null) or pipe
#   QUICK=1             smoke run: small inputs, 1 run, no warm-up; results go to results/quick/
#   OUT_DIR=...         where the .md and raw/ JSON go (default benches/results)
#   CHECK_TIMEOUT=300   seconds before a correctness check counts as hung
#   BENCH_TIMEOUT=900   seconds before one hyperfine call (all runs of a command) is cut
#   FORCE=1             benchmark even when a correctness check failed
#   ONLY=REGEX          run only the rows whose id matches (e.g. ONLY='^(startup|pipe|gzip|xz)-')
#   FRUN_STATIC=FILE    the static (musl) binary packaging/build.sh puts in dist/: adds its start-up row
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh" bench

if [[ $QUICK == 1 ]]; then
    SMALL_LINES=${SMALL_LINES:-20000}
    TINY_LINES=${TINY_LINES:-500}
    FILES=${FILES:-200}
    RUNS=${RUNS:-1}
    NUMA_RUNS=${NUMA_RUNS:-1}
    STARTUP_RUNS=${STARTUP_RUNS:-3}
    JOB_LINES=${JOB_LINES:-500}
    XJOB_LINES=${XJOB_LINES:-5000}
    XZ_LINES=${XZ_LINES:-300000}
    LONG_MB=${LONG_MB:-20}
else
    SMALL_LINES=${SMALL_LINES:-200000}
    TINY_LINES=${TINY_LINES:-5000}
    FILES=${FILES:-2000}
    RUNS=${RUNS:-3}
    NUMA_RUNS=${NUMA_RUNS:-10}
    STARTUP_RUNS=${STARTUP_RUNS:-30}
    JOB_LINES=${JOB_LINES:-20000}
    XJOB_LINES=${XJOB_LINES:-100000}
    XZ_LINES=${XZ_LINES:-14000000}
    LONG_MB=${LONG_MB:-500}
fi
FILE_BYTES=${FILE_BYTES:-131072}
ECHO_OUTPUT=${ECHO_OUTPUT:-null}
NPROC=$(nproc)
SHA_RUNS=$((STARTUP_RUNS < 10 ? STARTUP_RUNS : 10))
((SHA_RUNS >= RUNS)) || SHA_RUNS=$RUNS

# ---------------------------------------------------------------- tools
as_root() {
    if [[ $(id -u) == 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        return 1
    fi
}

apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    log "apt-get install $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2 && return 0
    as_root apt-get update -q >&2 || return 1
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2
}

export PATH="$HOME/.cargo/bin:$PATH"

have cargo || die "cargo is needed to build frun"
have python3 || apt_install python3 || die "python3 is needed for the report"
have hyperfine || apt_install hyperfine || cargo install hyperfine --locked >&2 ||
    die "hyperfine is missing and could not be installed"
have xargs || apt_install findutils || die "xargs is missing"
have pigz || apt_install pigz || note "pigz not installed and not installable: its row is skipped"
have xz || apt_install xz-utils || note "xz not installed and not installable: its rows are skipped"

use_parallel=1
if ! have parallel; then
    apt_install parallel || true
fi
if ! have parallel; then
    use_parallel=0
    note "GNU Parallel not installed and not installable: its rows are skipped"
elif ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
    use_parallel=0
    note "'parallel' on PATH is not GNU Parallel (moreutils?): its rows are skipped"
fi

use_rp=1
if ! have rust-parallel; then
    log "cargo install rust-parallel --locked"
    cargo install rust-parallel --locked >&2 || true
fi
if ! have rust-parallel; then
    use_rp=0
    note "rust-parallel not installed and not installable: its rows are skipped"
fi

use_spawnloop=1
if ! have cc; then
    apt_install gcc || true
fi
have cc || {
    use_spawnloop=0
    note "no C compiler: spawn-loop limit rows are skipped"
}

# ---------------------------------------------------------------- build
start_work frun-bench
mkdir -p "$work/bin"

log "building frun (release)"
(cd "$root" && cargo build --release --quiet) >&2
frun_bin=${CARGO_TARGET_DIR:-$root/target}/release/frun
[[ -x $frun_bin ]] || die "no frun binary at $frun_bin"
# A copy, so a rebuild while the benchmark runs cannot swap the binary under it.
cp "$frun_bin" "$work/bin/frun"
[[ -z ${FRUN_STATIC:-} ]] || cp "$FRUN_STATIC" "$work/bin/frun-static"

if ((use_spawnloop)); then
    log "building spawnloop"
    if ! cc -O2 -pthread -o "$work/bin/spawnloop" "$here/spawnloop.c" >&2; then
        use_spawnloop=0
        note "spawnloop.c did not compile: spawn-loop limit rows are skipped"
    fi
fi
export PATH="$work/bin:$PATH"

# The bash builtin, in a frun.bash assembled around this host's build (as tests/bash/run.sh does).
log "building the bash builtin and frun.bash"
(cd "$root" && cargo rustc --release --quiet --lib --features bash --crate-type cdylib) >&2
assemble_frun_bash "$root" bench "$work/frun.bash" "${CARGO_TARGET_DIR:-$root/target}/release/libfrun.so"

# ---------------------------------------------------------------- inputs
cd "$work"
log "generating inputs in $work"
seq "$LINES" >lines.txt
seq "$SMALL_LINES" >small.txt
seq "$TINY_LINES" >tiny.txt
seq 1 >one.txt
seq "$JOB_LINES" >jobs.txt
seq "$XJOB_LINES" >xjobs.txt
seq "$XZ_LINES" >xz.txt
# One record of LONG_MB MB (and of a quarter and a half of that): 'a' bytes, no newline.
for part in 1 2 4; do
    head -c "$((LONG_MB * 1000000 / part))" /dev/zero | tr '\0' a >"long$part.txt"
done
# lines.txt pre-split into the 512 KiB chunks `frun -b 512k` cuts, one file each: running `wc -c`
# on them measures process starts alone (wc -c takes a regular file's size without reading it).
mkdir -p chunks && split -b 512k lines.txt chunks/c && ls "$PWD"/chunks/c* >chunks.txt
mkdir files
head -c "$((FILES * FILE_BYTES))" /dev/urandom | split -b "$FILE_BYTES" -a 6 -d - files/f
find files -type f | LC_ALL=C sort >files.txt

init_results "$(date +%F)-$(hostname -s 2>/dev/null || hostname)"

# ---------------------------------------------------------------- correctness (not timed)
lines_sorted=$(LC_ALL=C sort -S 25% lines.txt | sum_of)

log "correctness checks (frun output against seq)"
got=$(timeout -k 10 "$CHECK_TIMEOUT" frun echo <lines.txt | tr ' ' '\n' | LC_ALL=C sort -S 25% | sum_of) || got=error
check "frun echo < lines.txt: words sorted = seq $LINES sorted" "$lines_sorted" "$got"

got=$(timeout -k 10 "$CHECK_TIMEOUT" frun -k echo <lines.txt | tr ' ' '\n' | sum_of) || got=error
check "frun -k echo < lines.txt: words in order = seq $LINES" "$(sum_of <lines.txt)" "$got"

got=$(timeout -k 10 "$CHECK_TIMEOUT" frun -k printf '%s\n' <lines.txt | sum_of) || got=error
check "frun -k printf '%s\\n' < lines.txt = seq $LINES byte for byte" "$(sum_of <lines.txt)" "$got"

# shellcheck disable=SC2016 # $# is for the child sh
got=$(timeout -k 10 "$CHECK_TIMEOUT" frun sh -c 'echo $#' sh <lines.txt | awk '{ s += $1 } END { print s + 0 }') || got=error
check "frun sh -c 'echo \$#' sh < lines.txt: arguments passed add up to $LINES" "$LINES" "$got"

stats=$(timeout -k 10 "$CHECK_TIMEOUT" frun -v true <lines.txt 2>&1 >/dev/null) || stats="exit $?: $stats"
got=$(grep -o 'records=[0-9]*' <<<"$stats" || true)
check "frun -v true < lines.txt: stats say records=$LINES" "records=$LINES" "$got" "$stats"

got=$(timeout -k 10 "$CHECK_TIMEOUT" frun echo <one.txt) || got=error
check "frun echo < one.txt prints 1" "1" "$got"

want=$(xargs sha256sum <files.txt | LC_ALL=C sort | sum_of)
got=$(timeout -k 10 "$CHECK_TIMEOUT" frun sha256sum <files.txt | LC_ALL=C sort | sum_of) || got=error
check "frun sha256sum < files.txt = xargs sha256sum (sorted)" "$want" "$got"

# shellcheck disable=SC2016 # for the bash that runs it
got=$(timeout -k 10 "$CHECK_TIMEOUT" bash -c 'source ./frun.bash; f() { printf "%s\n" "$@"; }; frun -k f' <lines.txt | sum_of) || got=error
check "frun.bash: frun -k f (a bash function) < lines.txt = seq $LINES byte for byte" "$(sum_of <lines.txt)" "$got"

# shellcheck disable=SC2046 # the values are words on purpose, as users type them
got=$(timeout -k 10 "$CHECK_TIMEOUT" frun parallel -k echo {} ::: $(cat jobs.txt) | sum_of) || got=error
check "frun parallel -k echo {} ::: \$(seq $JOB_LINES) = seq $JOB_LINES" "$(sum_of <jobs.txt)" "$got"
# shellcheck disable=SC2046
got=$(timeout -k 10 "$CHECK_TIMEOUT" frun parallel -k -X echo {} ::: $(cat xjobs.txt) | tr ' ' '\n' | sum_of) || got=error
check "frun parallel -k -X echo {} ::: \$(seq $XJOB_LINES): words = seq $XJOB_LINES" "$(sum_of <xjobs.txt)" "$got"

# The compression rows' output must decompress (concatenated members) to the input.
got=$(timeout -k 10 "$CHECK_TIMEOUT" frun -k -b 1Mi gzip -1 <xz.txt | gzip -dc | sum_of) || got=error
check "frun -k -b 1Mi gzip -1 < xz.txt decompresses to xz.txt" "$(sum_of <xz.txt)" "$got"
if have pigz; then
    got=$(timeout -k 10 "$CHECK_TIMEOUT" frun -k -b 1Mi pigz -1 -p 1 <xz.txt | gzip -dc | sum_of) || got=error
    check "frun -k -b 1Mi pigz -1 -p 1 < xz.txt decompresses to xz.txt" "$(sum_of <xz.txt)" "$got"
fi
if have xz; then
    got=$(timeout -k 10 "$CHECK_TIMEOUT" frun -k -b 32Mi xz -T1 <xz.txt | xz -dc | sum_of) || got=error
    check "frun -k -b 32Mi xz -T1 < xz.txt decompresses to xz.txt" "$(sum_of <xz.txt)" "$got"
fi

if ((use_parallel)); then
    got=$(timeout -k 10 "$CHECK_TIMEOUT" parallel --will-cite -q -k -X printf '%s\n' <tiny.txt | sum_of) || got=error
    check "peer command line: parallel -q -k -X printf '%s\\n' < tiny.txt = seq $TINY_LINES" \
        "$(sum_of <tiny.txt)" "$got"
fi

# ---------------------------------------------------------------- benchmarks
# The manifest's rows (lib.sh's row): ID WORKLOAD TOOL COUNT UNIT KIND RUNS REF LIMIT COMMAND NOTE JSON LOG
hf_extra=()

# bench ID WORKLOAD TOOL COUNT UNIT WARMUP RUNS REF LIMIT COMMAND [NOTE]
# One hyperfine call per command, so warm-up and run counts can differ per tool.
bench() {
    local id=$1 workload=$2 tool=$3 count=$4 unit=$5 warmup=$6 runs=$7 ref=$8 limit=$9
    local cmd=${10} note=${11:-}
    [[ -z ${ONLY:-} || $id =~ $ONLY ]] || return 0
    local json="$raw_dir/$stamp-$id.json"
    log "[$workload] $cmd"
    # timeout signals hyperfine's whole process group, so a hung command goes too.
    if timeout -k 10 "$BENCH_TIMEOUT" hyperfine --style basic "${hf_extra[@]}" --warmup "$warmup" \
        --runs "$runs" --export-json "$json" "$cmd" >&2; then
        row "$id" "$workload" "$tool" "$count" "$unit" hf "$runs" "$ref" "$limit" "$cmd" "$note" "$json" ""
    else
        rm -f "$json"
        row "$id" "$workload" "$tool" "$count" "$unit" fail "$runs" "$ref" "$limit" "$cmd" \
            "failed (non-zero exit, hyperfine error or over ${BENCH_TIMEOUT} s)${note:+; $note}" "" ""
        notes+=("$id failed: $cmd")
    fi
}

# bench_interleaved WORKLOAD REF SHELL ID TOOL COMMAND [ID TOOL COMMAND]...: the commands run
# in rotation, STARTUP_RUNS rounds after 3 of warm-up (interleave.py), through sh -c when SHELL
# is not empty. For start-up, where a few percent is the whole difference, hyperfine's one
# command after the other lets the machine's drift decide.
bench_interleaved() {
    local workload=$1 ref=$2 shell=$3
    shift 3
    local ids=() tools=() cmds=() pairs=() i
    while (($# >= 3)); do
        if [[ -z ${ONLY:-} || $1 =~ $ONLY ]]; then
            ids+=("$1") tools+=("$2") cmds+=("$3") pairs+=("$1=$3")
        fi
        shift 3
    done
    ((${#ids[@]})) || return 0
    log "[$workload] interleaved: ${cmds[*]}"
    if timeout -k 10 "$BENCH_TIMEOUT" python3 "$here/interleave.py" --runs "$STARTUP_RUNS" --warmup 3 \
        ${shell:+--shell} --json-prefix "$raw_dir/$stamp-" "${pairs[@]}" >&2; then
        for i in "${!ids[@]}"; do
            row "${ids[i]}" "$workload" "${tools[i]}" 1 - il "$STARTUP_RUNS" "$ref" "" "${cmds[i]}" \
                "interleaved" "$raw_dir/$stamp-${ids[i]}.json" ""
        done
    else
        for i in "${!ids[@]}"; do
            rm -f "$raw_dir/$stamp-${ids[i]}.json"
            row "${ids[i]}" "$workload" "${tools[i]}" 1 - fail "$STARTUP_RUNS" "$ref" "" "${cmds[i]}" \
                "failed (non-zero exit or over ${BENCH_TIMEOUT} s)" "" ""
            notes+=("${ids[i]} failed: ${cmds[i]}")
        done
    fi
}

# spawnloop times only its spawn loop (setting up 10M argv strings takes longer than spawning);
# hyperfine still drives it and each run appends its own timing to a log.
# Optional: TOTAL values (default LINES) and the PROGRAM spawned (default /bin/true).
bench_spawnloop() {
    local id=$1 workload=$2 batch=$3 warmup=$4 runs=$5 ref=$6 total=${7:-$LINES} prog=${8:-}
    local logf="$raw_dir/$stamp-$id.log"
    local cmd="spawnloop $NPROC $batch $total${prog:+ $prog}"
    [[ -z ${ONLY:-} || $id =~ $ONLY ]] || return 0
    : >"$logf"
    log "[$workload] $cmd"
    if timeout -k 10 "$BENCH_TIMEOUT" hyperfine --style basic --warmup "$warmup" --runs "$runs" \
        --export-json "$raw_dir/$stamp-$id.json" "$cmd >> $logf" >&2; then
        row "$id" "$workload" "spawn loop, batch $batch${prog:+, $prog}" "$total" lines self "$runs" "$ref" \
            "${prog:+$id}${prog:-true-spawnloop-max}" "$cmd" \
            "loop time only, argv set-up excluded" "$raw_dir/$stamp-$id.json" "$logf"
    else
        row "$id" "$workload" "spawn loop, batch $batch" "$total" lines fail "$runs" "$ref" "" "$cmd" \
            "failed" "" ""
    fi
}

skip() { # ID WORKLOAD TOOL COUNT UNIT WHY
    row "$1" "$2" "$3" "$4" "$5" skip 0 "" "" "" "$6" "" ""
}

run_benchmarks() {
    busy_check "before the benchmarks"

    P=$NPROC
    W=$WARMUP

    # start-up: frun, xargs and the static binary interleaved run by run (interleave.py); the
    # far slower peers under hyperfine. No shell in between (-N), input named with each tool's
    # file option.
    wl="start-up, 1-line input"
    bench_interleaved "$wl" startup-frun "" \
        startup-frun frun "frun -a one.txt echo" \
        startup-xargs xargs "xargs -a one.txt echo" \
        ${FRUN_STATIC:+startup-frun-static "frun, static musl (dist/)" "frun-static -a one.txt echo"}
    # The released static binary: no dynamic loader, so none of glibc's start-up CPU probing.
    [[ -n ${FRUN_STATIC:-} ]] ||
        skip startup-frun-static "$wl" "frun, static musl (dist/)" 1 - "FRUN_STATIC not set"
    hf_extra=(-N)
    if ((use_parallel)); then
        bench startup-parallel "$wl" "GNU Parallel" 1 - 1 "$STARTUP_RUNS" startup-frun "" \
            "parallel --will-cite -a one.txt echo"
    else skip startup-parallel "$wl" "GNU Parallel" 1 - "not installed"; fi
    if ((use_rp)); then
        bench startup-rust-parallel "$wl" rust-parallel 1 - 3 "$STARTUP_RUNS" startup-frun "" \
            "rust-parallel -i one.txt echo"
    else skip startup-rust-parallel "$wl" rust-parallel 1 - "not installed"; fi
    hf_extra=()
    # The same line from a pipe, as typed at a prompt (`echo hello | xargs echo`): each
    # pipeline runs under sh, so every row pays for one sh and one printf.
    wl="start-up, 1 line from a pipe"
    bench_interleaved "$wl" startup-pipe-frun shell \
        startup-pipe-frun frun "printf 'hello\\n' | frun echo" \
        startup-pipe-xargs xargs "printf 'hello\\n' | xargs echo" \
        ${FRUN_STATIC:+startup-pipe-frun-static "frun, static musl (dist/)" "printf 'hello\\n' | frun-static echo"}
    [[ -n ${FRUN_STATIC:-} ]] ||
        skip startup-pipe-frun-static "$wl" "frun, static musl (dist/)" 1 - "FRUN_STATIC not set"

    wl="/bin/true, default flags"
    lim=""
    ((use_spawnloop)) && lim=true-spawnloop-max
    bench true-frun "$wl" frun "$LINES" lines "$W" "$RUNS" true-frun "$lim" "frun true < lines.txt"
    # The progress line's cost: drawn (forced, as hyperfine's stderr is no terminal), with the
    # input file's records counted in the background.
    bench true-frun-bar "$wl" "frun --bar=always" "$LINES" lines "$W" "$RUNS" true-frun "$lim" \
        "frun --bar=always true < lines.txt 2>/dev/null"
    bench true-xargs-n1000 "$wl" "xargs -P$P -n1000" "$LINES" lines 0 "$RUNS" true-frun "$lim" \
        "xargs -P$P -n1000 true < lines.txt"
    bench true-xargs-max "$wl" "xargs -P$P (default max args)" "$LINES" lines 0 "$RUNS" true-frun "$lim" \
        "xargs -P$P true < lines.txt"
    if ((use_spawnloop)); then
        bench_spawnloop true-spawnloop-max "$wl" max "$W" "$RUNS" true-frun
        bench_spawnloop true-spawnloop-4096 "$wl" 4096 0 "$RUNS" true-frun
    else
        skip true-spawnloop-max "$wl" "spawn loop" "$LINES" lines "no C compiler"
    fi
    if ((use_parallel)); then
        bench true-parallel "$wl" "GNU Parallel -X" "$SMALL_LINES" lines 0 "$RUNS" true-frun "$lim" \
            "parallel --will-cite -X true < small.txt"
    else skip true-parallel "$wl" "GNU Parallel -X" "$SMALL_LINES" lines "not installed"; fi
    if ((use_rp)); then
        bench true-rust-parallel "$wl" rust-parallel "$TINY_LINES" lines 0 "$RUNS" true-frun "$lim" \
            "rust-parallel true < tiny.txt" "one process per line"
    else skip true-rust-parallel "$wl" rust-parallel "$TINY_LINES" lines "not installed"; fi

    # NUMA placement's own cost: four logical nodes on the same CPUs against the one-node run.
    # The difference sought (5%) is the size of this machine's run-to-run noise: more runs.
    bench true-frun-nodes4 "$wl" "frun --nodes @4 -j $((P * 2))" "$LINES" lines "$W" "$NUMA_RUNS" true-frun "$lim" \
        "frun --nodes @4 -j $((P * 2)) true < lines.txt"
    bench true-frun-j2p "$wl" "frun -j $((P * 2)) (one node)" "$LINES" lines "$W" "$NUMA_RUNS" true-frun "$lim" \
        "frun -j $((P * 2)) true < lines.txt"

    # The personalities: the same lines as GNU Parallel's and xargs' users type.
    wl="one job per value: parallel echo {} ::: \$(seq $JOB_LINES)"
    jlim=""
    ((use_spawnloop)) && jlim=job-spawnloop
    hf_extra=(--output "$ECHO_OUTPUT")
    # The ceiling: one /bin/echo per value, spawned by a C loop with nothing else to do.
    if ((use_spawnloop)); then
        bench_spawnloop job-spawnloop "$wl" 1 0 "$RUNS" job-frun-parallel "$JOB_LINES" /bin/echo
    else skip job-spawnloop "$wl" "spawn loop" "$JOB_LINES" lines "no C compiler"; fi
    bench job-frun-parallel "$wl" "frun parallel" "$JOB_LINES" lines "$W" "$RUNS" job-frun-parallel "$jlim" \
        "frun parallel echo {} ::: \$(cat jobs.txt)"
    if ((use_parallel)); then
        bench job-parallel "$wl" "GNU Parallel" "$JOB_LINES" lines 0 "$RUNS" job-frun-parallel "" \
            "parallel --will-cite echo {} ::: \$(cat jobs.txt)"
    else skip job-parallel "$wl" "GNU Parallel" "$JOB_LINES" lines "not installed"; fi
    wl="many values per job: parallel -X echo {} ::: \$(seq $XJOB_LINES)"
    bench jobx-frun-parallel "$wl" "frun parallel -X" "$XJOB_LINES" lines "$W" "$RUNS" jobx-frun-parallel "" \
        "frun parallel -X echo {} ::: \$(cat xjobs.txt)"
    if ((use_parallel)); then
        bench jobx-parallel "$wl" "GNU Parallel -X" "$XJOB_LINES" lines 0 "$RUNS" jobx-frun-parallel "" \
            "parallel --will-cite -X echo {} ::: \$(cat xjobs.txt)"
    else skip jobx-parallel "$wl" "GNU Parallel -X" "$XJOB_LINES" lines "not installed"; fi
    hf_extra=()
    wl="/bin/true, xargs' command line: xargs -P$P -n1000"
    bench xtrue-frun "$wl" "frun -j$P -L1000 (native)" "$LINES" lines "$W" "$RUNS" xtrue-frun "$lim" \
        "frun -j$P -L1000 true < lines.txt"
    bench xtrue-frun-xargs "$wl" "frun xargs -P$P -n1000" "$LINES" lines "$W" "$RUNS" xtrue-frun "$lim" \
        "frun xargs -P$P -n1000 true < lines.txt"

    wl="/bin/true, -l 1:-1"
    bench true-frun-l "$wl" "frun -l 1:-1" "$LINES" lines "$W" "$RUNS" true-frun "$lim" \
        "frun -l 1:-1 true < lines.txt"

    wl="echo, output heavy"
    hf_extra=(--output "$ECHO_OUTPUT")
    bench echo-frun "$wl" frun "$LINES" lines "$W" "$RUNS" echo-frun "" "frun echo < lines.txt"
    bench echo-frun-k "$wl" "frun -k" "$LINES" lines "$W" "$RUNS" echo-frun "" "frun -k echo < lines.txt"
    bench echo-xargs-n1000 "$wl" "xargs -P$P -n1000" "$LINES" lines 0 "$RUNS" echo-frun "" \
        "xargs -P$P -n1000 echo < lines.txt"

    wl="printf '%s\\n', ordered"
    bench printf-frun-k "$wl" "frun -k" "$LINES" lines "$W" "$RUNS" printf-frun-k "" \
        "frun -k printf '%s\\n' < lines.txt"
    bench printf-frun "$wl" "frun (unordered)" "$LINES" lines "$W" "$RUNS" printf-frun-k "" \
        "frun printf '%s\\n' < lines.txt"
    bench printf-xargs-n1000 "$wl" "xargs -P$P -n1000 (unordered)" "$LINES" lines 0 "$RUNS" printf-frun-k "" \
        "xargs -P$P -n1000 printf '%s\\n' < lines.txt"
    if ((use_parallel)); then
        bench printf-parallel-k "$wl" "GNU Parallel -k -X" "$SMALL_LINES" lines 0 "$RUNS" printf-frun-k "" \
            "parallel --will-cite -q -k -X printf '%s\\n' < small.txt"
    else skip printf-parallel-k "$wl" "GNU Parallel -k -X" "$SMALL_LINES" lines "not installed"; fi
    hf_extra=()

    wl="stdin mode: wc -l"
    bench pipe-frun "$wl" "frun -s" "$LINES" lines "$W" "$RUNS" pipe-frun "" "frun -s wc -l < lines.txt"
    bench pipe-frun-pipe "$wl" "frun -s (input from a pipe)" "$LINES" lines "$W" "$RUNS" pipe-frun "" \
        "cat lines.txt | frun -s wc -l"
    bench pipe-frun-b "$wl" "frun -b 512k wc -c" "$LINES" lines "$W" "$RUNS" pipe-frun "" \
        "frun -b 512k wc -c < lines.txt"
    bench pipe-frun-nodes4 "$wl" "frun -s --nodes @4 -j $((P * 2))" "$LINES" lines "$W" "$NUMA_RUNS" pipe-frun "" \
        "frun -s --nodes @4 -j $((P * 2)) wc -l < lines.txt"
    bench pipe-frun-j2p "$wl" "frun -s -j $((P * 2)) (one node)" "$LINES" lines "$W" "$NUMA_RUNS" pipe-frun "" \
        "frun -s -j $((P * 2)) wc -l < lines.txt"
    bench pipe-wc "$wl" "wc -l alone (the limit)" "$LINES" lines "$W" "$RUNS" pipe-frun "" "wc -l < lines.txt"
    bench pipe-cat-wc "$wl" "cat | wc -l (the pipe alone)" "$LINES" lines "$W" "$RUNS" pipe-frun "" \
        "cat lines.txt | wc -l"
    bench pipe-wc-starts "$wl" "xargs -P$P -n1 wc -c over the 512k chunks as files (process starts only)" \
        "$LINES" lines "$W" "$RUNS" pipe-frun "" "xargs -P$P -n1 wc -c < chunks.txt"
    if ((use_parallel)); then
        bench pipe-parallel "$wl" "GNU Parallel --pipe --block 1M" "$LINES" lines "$W" "$RUNS" pipe-frun "" \
            "parallel --will-cite --pipe --block 1M wc -l < lines.txt"
        bench pipe-parallel-part "$wl" "GNU Parallel --pipepart --block 1M" "$LINES" lines "$W" "$RUNS" pipe-frun "" \
            "parallel --will-cite --pipepart -a lines.txt --block 1M wc -l"
    else skip pipe-parallel "$wl" "GNU Parallel --pipe" "$LINES" lines "not installed"; fi
    if ((use_rp)); then
        bench pipe-rust-parallel "$wl" "rust-parallel --pipe" "$LINES" lines "$W" "$RUNS" pipe-frun "" \
            "rust-parallel --pipe wc -l < lines.txt"
    else skip pipe-rust-parallel "$wl" "rust-parallel --pipe" "$LINES" lines "not installed"; fi

    # Real CPU-bound pipelines against the tool people would pick instead; the output (members
    # concatenated, in order) was checked above to decompress to the input.
    wl="compression, seq $XZ_LINES"
    bench gzip-frun "$wl" "frun -k -b 1Mi gzip -1" "$XZ_LINES" lines "$W" "$RUNS" gzip-frun "" \
        "frun -k -b 1Mi gzip -1 < xz.txt > out.gz"
    if have pigz; then
        bench gzip-pigz "$wl" "pigz -1 -p $P" "$XZ_LINES" lines "$W" "$RUNS" gzip-frun "" \
            "pigz -1 -p $P < xz.txt > out.gz"
    else skip gzip-pigz "$wl" "pigz" "$XZ_LINES" lines "not installed"; fi
    # gzip's own deflate is slower than zlib's (pigz), so two more rows tell the compressor
    # from the scheduler: gzip alone on one core (frun's bound is that over the cores), and frun
    # running pigz's zlib on one thread per chunk against pigz on all of them.
    bench gzip-serial "$wl" "gzip -1, one core" "$XZ_LINES" lines 1 "$RUNS" gzip-frun "" \
        "gzip -1 < xz.txt > out.gz"
    if have pigz; then
        bench gzip-frun-pigz "$wl" "frun -k -b 1Mi pigz -1 -p 1" "$XZ_LINES" lines "$W" "$RUNS" gzip-frun "" \
            "frun -k -b 1Mi pigz -1 -p 1 < xz.txt > out.gz"
    else skip gzip-frun-pigz "$wl" "frun pigz -p 1" "$XZ_LINES" lines "not installed"; fi
    if have xz; then
        bench xz-frun "$wl" "frun -k -b 32Mi xz -T1" "$XZ_LINES" lines "$W" "$RUNS" xz-frun "" \
            "frun -k -b 32Mi xz -T1 < xz.txt > out.xz"
        bench xz-xz "$wl" "xz -T$P" "$XZ_LINES" lines "$W" "$RUNS" xz-frun "" \
            "xz -T$P < xz.txt > out.xz"
    else skip xz-frun "$wl" "xz" "$XZ_LINES" lines "not installed"; fi

    # A bash function as the command: f() { for x; do :; done; } costs bash itself ~1.5 s per
    # million records, so the bound is one bash calling f over the records in batches of 4096
    # (T); T / cores is perfect parallelism of that loop.
    wl="bash function f() { for x; do :; done; }"
    fdef='f() { for x; do :; done; }'
    bench bash-frun "$wl" "frun f (frun.bash)" "$LINES" lines "$W" "$RUNS" bash-frun "" \
        "bash -c 'source ./frun.bash; $fdef; frun f < lines.txt'"
    bench bash-bound "$wl" "one bash, f over batches of 4096 (T)" "$LINES" lines 0 "$RUNS" bash-frun "" \
        "bash -c '$fdef; while mapfile -t -n 4096 a && ((\${#a[@]})); do f \"\${a[@]}\"; done < lines.txt'"
    bench bash-xargs "$wl" "xargs -P$P -n1000 bash -c" "$LINES" lines 0 "$RUNS" bash-frun "" \
        "xargs -P$P -n1000 bash -c '$fdef; f \"\$@\"' _ < lines.txt"
    if ((use_parallel)); then
        bench bash-parallel "$wl" "GNU Parallel -X, exported function" "$SMALL_LINES" lines 0 "$RUNS" bash-frun "" \
            "bash -c '$fdef; export -f f; parallel --will-cite -X f < small.txt'"
    else skip bash-parallel "$wl" "GNU Parallel -X" "$SMALL_LINES" lines "not installed"; fi
    bench bash-frun-colon "$wl" "frun : (a builtin)" "$LINES" lines "$W" "$RUNS" bash-frun "" \
        "bash -c 'source ./frun.bash; frun : < lines.txt'"

    # One record longer than any chunk, from a pipe (cat) and from the file itself: each read
    # of it used to search it again from its start. The pipe rows are compared with the file's
    # (the pipe costs one copy more, into the spool, and cat's own work); the --lb rows at a
    # quarter and a half of the size show that the cost grows linearly with it.
    wl="one record of $LONG_MB MB (no newline)"
    local how id
    for how in "block:frun --block 10M cat" "pipe:frun parallel --pipe --block 10M cat" \
        "lb:frun parallel --lb --pipe --block 10M cat"; do
        id=${how%%:*}
        bench "long-$id-file" "$wl" "${how#*:}, from the file" "$LONG_MB" MB 1 "$RUNS" \
            "long-$id-file" "" "${how#*:} < long1.txt > /dev/null"
        bench "long-$id-pipe" "$wl" "${how#*:}, from a pipe" "$LONG_MB" MB 1 "$RUNS" \
            "long-$id-file" "" "cat long1.txt | ${how#*:} > /dev/null"
    done
    # One line of a job's output, held whole by --lb until its end (as GNU Parallel holds it),
    # then written at once: against cat into the same pipe (the goal: within 2x).
    bench long-lb-line "$wl" "frun parallel --lb cat ::: the file, into a pipe" "$LONG_MB" MB 1 \
        "$RUNS" long-lb-line "" "frun parallel --lb cat ::: long1.txt | cat > /dev/null"
    bench long-cat-pipe "$wl" "cat into a pipe (the bound of --lb)" "$LONG_MB" MB 1 "$RUNS" \
        long-lb-line "" "cat long1.txt | cat > /dev/null"
    bench long-lb-pipe-half "$wl" "--lb from a pipe, $((LONG_MB / 2)) MB" "$((LONG_MB / 2))" MB 1 \
        "$RUNS" long-lb-pipe "" "cat long2.txt | frun parallel --lb --pipe --block 10M cat > /dev/null"
    bench long-lb-pipe-quarter "$wl" "--lb from a pipe, $((LONG_MB / 4)) MB" "$((LONG_MB / 4))" MB \
        1 "$RUNS" long-lb-pipe "" \
        "cat long4.txt | frun parallel --lb --pipe --block 10M cat > /dev/null"
    if ((use_parallel)); then
        bench long-pipe-gnu "$wl" "GNU Parallel --pipe --block 10M, $((LONG_MB / 4)) MB" \
            "$((LONG_MB / 4))" MB 0 "$RUNS" long-lb-pipe-quarter "" \
            "cat long4.txt | parallel --will-cite --pipe --block 10M cat > /dev/null"
    else skip long-pipe-gnu "$wl" "GNU Parallel --pipe" "$((LONG_MB / 4))" MB "not installed"; fi

    wl="sha256sum, $FILES files of $FILE_BYTES B"
    bench sha-frun "$wl" frun "$FILES" files "$W" "$SHA_RUNS" sha-frun "" "frun sha256sum < files.txt"
    bench sha-xargs-serial "$wl" "xargs (serial)" "$FILES" files "$W" "$SHA_RUNS" sha-frun "" \
        "xargs sha256sum < files.txt"
    bench sha-xargs-p "$wl" "xargs -P$P -n50" "$FILES" files "$W" "$SHA_RUNS" sha-frun "" \
        "xargs -P$P -n50 sha256sum < files.txt"
    if ((use_parallel)); then
        bench sha-parallel "$wl" "GNU Parallel -X" "$FILES" files "$W" "$SHA_RUNS" sha-frun "" \
            "parallel --will-cite -X sha256sum < files.txt"
    else skip sha-parallel "$wl" "GNU Parallel -X" "$FILES" files "not installed"; fi
    if ((use_rp)); then
        bench sha-rust-parallel "$wl" rust-parallel "$FILES" files 0 "$SHA_RUNS" sha-frun "" \
            "rust-parallel sha256sum < files.txt" "one process per file"
    else skip sha-rust-parallel "$wl" rust-parallel "$FILES" files "not installed"; fi

    busy_check "after the benchmarks"
}

unless_check_failed run_benchmarks

# ---------------------------------------------------------------- machine and report
{
    machine_rows
    printf 'frun\t%s\n' "$(frun --version 2>&1 | head -n1)"
    printf 'xargs\t%s\n' "$(version xargs --version)"
    printf 'GNU Parallel\t%s\n' "$(version parallel --version)"
    printf 'rust-parallel\t%s\n' "$(version rust-parallel --version)"
    printf 'hyperfine\t%s\n' "$(version hyperfine --version)"
    printf 'rustc\t%s\n' "$(version rustc --version)"
    printf 'cc\t%s\n' "$(version cc --version)"
    printf 'settings\tLINES=%s SMALL_LINES=%s TINY_LINES=%s JOB_LINES=%s XJOB_LINES=%s LONG_MB=%s FILES=%s FILE_BYTES=%s RUNS=%s STARTUP_RUNS=%s SHA_RUNS=%s ECHO_OUTPUT=%s QUICK=%s\n' \
        "$LINES" "$SMALL_LINES" "$TINY_LINES" "$JOB_LINES" "$XJOB_LINES" "$LONG_MB" "$FILES" "$FILE_BYTES" "$RUNS" "$STARTUP_RUNS" "$SHA_RUNS" \
        "$ECHO_OUTPUT" "$QUICK"
    printf 'inputs\tlines.txt = seq %s; small.txt = seq %s; tiny.txt = seq %s; one.txt = seq 1; files.txt = %s paths of files with %s random bytes each\n' \
        "$LINES" "$SMALL_LINES" "$TINY_LINES" "$FILES" "$FILE_BYTES"
} >"$work/machine.tsv"

write_report "$here/report.py"
die_if_check_failed "a correctness check failed (see the table): frun's numbers above are not valid"
