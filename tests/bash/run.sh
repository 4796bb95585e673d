#!/usr/bin/env bash
# shellcheck disable=SC2016 # the cases are bash code, expanded by the bash that runs them
# The bash front end's tests: builds the builtin for this host, assembles a frun.bash around it,
# and runs each case in a fresh bash that sources that frun.bash. Every case compares against an
# expectation made without frun (seq, cksum, a count, a literal).
# FRUN_BASH=path tests an already built frun.bash instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -z ${FRUN_BASH:-} ]]; then
  cargo build --quiet --release --bin frun
  cargo rustc --quiet --release --lib --no-default-features --features bash --crate-type cdylib
  host=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
  FRUN_BASH=$repo/target/bash-test/frun.bash
  mkdir -p "${FRUN_BASH%/*}"
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  bash packaging/assemble-bash.sh packaging/frun.bash.in "$version" test "$FRUN_BASH" \
    "$host=target/release/libfrun.so"
fi
export FRUN_BASH
cd "$work"

passed=0
failed=()

# in_bash SCRIPT [ARG...]: runs SCRIPT in a fresh non-interactive bash that has sourced
# frun.bash, with the ARGs as "$@".
in_bash() {
  local script=$1
  shift
  bash --norc --noprofile -c 'source "$FRUN_BASH" || exit 90
'"$script" bash "$@"
}

# check NAME EXPECTED ACTUAL
check() {
  if [[ $2 == "$3" ]]; then
    passed=$((passed + 1))
  else
    failed+=("$1")
    printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3" >&2
  fi
}

# --- loading ---------------------------------------------------------------------------------
check "loads as a builtin" builtin "$(in_bash 'type -t frun')"
check "diagnose passes" 0 "$(bash "$FRUN_BASH" --diagnose >/dev/null; echo $?)"
check "diagnose names the blob it would load" 1 \
  "$(bash "$FRUN_BASH" --diagnose | grep -c '^would load: the builtin for glibc >= ')"
check "nothing left in /dev/shm" "" "$(in_bash 'ls -d /dev/shm/frun.* 2>/dev/null')"

# A tampered blob: one base64 character changed in the middle of the payload (to another
# base64 character: swapping two could swap two equal ones).
cp "$FRUN_BASH" tampered.bash
line=$(( $(grep -n '^#@blob ' tampered.bash | head -n 1 | cut -d: -f1) + 100 ))
sed -i "${line}{s/^A/B/;t;s/^./A/}" tampered.bash
out=$(bash --norc -c 'source ./tampered.bash; echo "status=$? type=$(type -t frun)"' 2>&1 </dev/null)
check "tampered blob is refused" 1 "$(grep -c 'is damaged: sha256 .* expected .*not loading it' <<<"$out")"
check "tampered blob is not loaded" 1 "$(grep -c 'status=1 type=function' <<<"$out")"
check "diagnose reports the mismatch" 1 "$(bash tampered.bash --diagnose | grep -c MISMATCH)"
check "diagnose fails on a mismatch" 1 "$(bash tampered.bash --diagnose >/dev/null; echo $?)"
# --- verify before anything runs -------------------------------------------------------------
# The block README.md and SECURITY.md give for checking frun.bash before sourcing it, run as
# written against a release directory (frun.bash and its SHA256SUMS). `gh attestation verify`
# needs the network and a published release, so here `gh` is a function that accepts: what is
# tested is that the checksum step refuses a tampered file before any byte of it runs.
verify_block() {
  awk '/<!-- verify-then-source -->/ { marked = 1; next }
       marked && /^ *```sh/ { inside = 1; next }
       inside && /^ *```/ { exit }
       inside { sub(/^   /, ""); print }' "$1"
}
block=$(verify_block "$repo/README.md")
check "README.md has the verify-then-source block" 1 "$(grep -c '^ *source ./frun.bash$' <<<"$block")"
check "SECURITY.md's verify-then-source block is README's" "$block" "$(verify_block "$repo/SECURITY.md")"
# try_release NAME FILE: runs the block in a directory holding FILE as frun.bash and the
# SHA256SUMS of the real one; prints the block's status, whether the file's code ran, and
# what `frun` is afterwards.
mkdir -p release
(cp "$FRUN_BASH" release/frun.bash && cd release && sha256sum frun.bash >SHA256SUMS)
try_release() {
  local dir=$PWD/try-$1
  rm -rf "$dir"
  mkdir -p "$dir"
  cp release/SHA256SUMS "$dir/"
  cp "$2" "$dir/frun.bash"
  (cd "$dir" && bash --norc --noprofile -c 'gh() { return 0; }
'"$block"'
st=$?; echo "status=$st ran=$([[ -e ran ]] && echo yes || echo no) frun=$([[ $(type -t frun) == builtin ]] && echo builtin || echo none)"' 2>/dev/null </dev/null)
}
check "verify block: the genuine file loads" $'frun.bash: OK\nstatus=0 ran=no frun=builtin' \
  "$(try_release genuine release/frun.bash)"
{ printf 'touch ran\n'; cat "$FRUN_BASH"; } >prepended.bash
check "verify block: code prepended is refused, and does not run" $'frun.bash: FAILED\nstatus=1 ran=no frun=none' \
  "$(try_release prepended prepended.bash)"
{ cat "$FRUN_BASH"; printf 'touch ran\n'; } >appended.bash
check "verify block: code appended is refused, and does not run" $'frun.bash: FAILED\nstatus=1 ran=no frun=none' \
  "$(try_release appended appended.bash)"
cp "$FRUN_BASH" middle.bash
half=$(($(stat -c %s middle.bash) / 2))
printf '%s' "$( (($(od -An -tu1 -j "$half" -N1 middle.bash) == 65)) && echo B || echo A)" |
  dd of=middle.bash bs=1 seek="$half" conv=notrunc status=none
check "verify block: one byte changed in the middle is refused" $'frun.bash: FAILED\nstatus=1 ran=no frun=none' \
  "$(try_release middle middle.bash)"
head -c "$(($(stat -c %s "$FRUN_BASH") - 100))" "$FRUN_BASH" >cut.bash
check "verify block: a file cut short is refused" $'frun.bash: FAILED\nstatus=1 ran=no frun=none' \
  "$(try_release cut cut.bash)"
check "--verify is gone and says why (status 2)" "2 1" \
  "$(out=$(bash "$FRUN_BASH" --verify 2>&1); echo "$? $(grep -c 'cannot vouch for itself' <<<"$out")")"

# A truncated file: the payload ends early.
head -c "$(( $(stat -c %s "$FRUN_BASH") / 2 ))" "$FRUN_BASH" >truncated.bash
out=$(bash --norc -c 'source ./truncated.bash; echo "status=$?"' 2>&1 </dev/null)
check "truncated file is refused" 1 "$(grep -c 'damaged or truncated' <<<"$out")"
check "truncated file: source fails" 1 "$(grep -c 'status=1' <<<"$out")"
# --diagnose on a damaged file: a file of two builtins (the one built here, twice, under two
# floors), cut at several points or with one byte changed, must fail and name each damaged
# builtin ("damaged: the builtin for glibc >= FLOOR"); the intact file passes.
first=$(grep -n '^#@blob ' "$FRUN_BASH" | head -n 1 | cut -d: -f1)
end=$(awk -v f="$first" 'NR > f && $0 == "#@end" { print NR; exit }' "$FRUN_BASH")
sed -n "$((first + 1)),$((end - 1))p" "$FRUN_BASH" | base64 -d >blob.so
host_floor=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
bash "$repo/packaging/assemble-bash.sh" "$repo/packaging/frun.bash.in" verify-test test two.bash \
  "2.17=blob.so" "$host_floor=blob.so"
# verify_damaged NAME FILE FLOORS: --diagnose fails on FILE and names exactly FLOORS as damaged.
verify_damaged() {
  local out st=0
  out=$(bash "$2" --diagnose 2>&1) || st=$?
  check "diagnose fails: $1" failed "$( ((st != 0)) && echo failed || echo "passed: $out")"
  check "diagnose names the damaged builtins: $1" "$3" \
    "$(awk '/^damaged: the builtin for glibc >= / { printf "%s%s", sep, $NF; sep = " " }' <<<"$out")"
}
check "diagnose: the intact two-builtin file passes" "0 2" \
  "$(out=$(bash two.bash --diagnose); echo "$? $(grep -c ' ok$' <<<"$out")")"
mapfile -t blob_lines < <(grep -n -e "^#@blob " -e "^#@end$" two.bash | cut -d: -f1)
# Cuts two.bash after line $2 into $1.
cut_after_line() { head -n "$2" two.bash >"$1"; }
cut_after_line cut-in-last.bash $(((blob_lines[2] + blob_lines[3]) / 2))
verify_damaged "cut inside the last builtin" cut-in-last.bash "$host_floor"
cut_after_line cut-before-last-end.bash $((blob_lines[3] - 1))
verify_damaged "cut before the last #@end" cut-before-last-end.bash "$host_floor"
cut_after_line cut-between.bash "${blob_lines[1]}"
verify_damaged "cut between the builtins (the last one gone whole)" cut-between.bash "$host_floor"
cut_after_line cut-in-first.bash $(((blob_lines[0] + blob_lines[1]) / 2))
verify_damaged "cut inside the first builtin" cut-in-first.bash "2.17 $host_floor"
cut_after_line cut-after-last.bash "${blob_lines[3]}"
verify_damaged "cut after the last builtin (its #@eof gone)" cut-after-last.bash ""
check "diagnose: a cut after the last builtin says the file is truncated" 1 \
  "$(bash cut-after-last.bash --diagnose | grep -c 'is truncated')"
head -c "$(($(stat -c %s two.bash) - 1))" two.bash >cut-last-byte.bash
verify_damaged "the last byte cut" cut-last-byte.bash ""
head -c 3000 two.bash >cut-in-code.bash
check "diagnose fails: cut inside the code" failed \
  "$(bash cut-in-code.bash --diagnose >/dev/null 2>&1 && echo passed || echo failed)"
# flip_byte OUT LINE: two.bash with the first character of LINE changed (to another base64 one).
flip_byte() {
  awk -v n="$2" 'NR == n { c = substr($0, 1, 1); $0 = (c == "A" ? "B" : "A") substr($0, 2) } { print }' \
    two.bash >"$1"
}
flip_byte flip-first.bash $((blob_lines[0] + 50))
verify_damaged "a byte changed in the first builtin" flip-first.bash 2.17
check "diagnose: the other builtin is still ok" 1 "$(bash flip-first.bash --diagnose | grep -c ' ok$')"
flip_byte flip-last.bash $((blob_lines[2] + 50))
verify_damaged "a byte changed in the builtin it would load" flip-last.bash "$host_floor"
check "diagnose: would not load a damaged builtin" \
  "would load: nothing (the builtin for glibc >= $host_floor is damaged)" \
  "$(bash flip-last.bash --diagnose | grep '^would load: ')"

# The fallback refuses a function clearly instead of failing later.
out=$(bash --norc -c 'source ./tampered.bash 2>/dev/null; f() { :; }; frun f </dev/null; echo "status=$?"' 2>&1)
check "fallback refuses a function" 1 "$(grep -c 'f is a bash function, which needs the frun builtin' <<<"$out")"
check "fallback status" 1 "$(grep -c 'status=2' <<<"$out")"

# --- what a function sees ----------------------------------------------------------------------
check "function over records, -k" "$(seq 1000 | cksum)" \
  "$(seq 1000 | in_bash 'f() { local x; for x; do printf "%s\n" "$x"; done; }; frun -k f' | cksum)"
check "unordered output holds every record once" "$(seq 20000 | cksum)" \
  "$(seq 20000 | in_bash 'f() { printf "%s\n" "$@"; }; frun f' | sort -n | cksum)"
check "local, unexported, indexed and associative arrays" "$(printf 'a-1-x-5\nb-2-y-5\n')" \
  "$(printf 'a\nb\n' | in_bash 'declare -A m=([a]=1 [b]=2); declare -a arr=(x y); n=5
    f() { local k=$1 i; [[ $k == a ]] && i=0 || i=1; echo "$k-${m[$k]}-${arr[$i]}-$n"; }
    frun -k -l 1 f')"
check "aliases" "$(seq 3 | sed 's/^/A /')" \
  "$(seq 3 | in_bash 'shopt -s expand_aliases; alias al="echo A"; frun -k -l 1 al')"
specials=$'sp ace\ttab\n"dq" \x27sq\x27\n$HOME `x` $(y)\n*\n\\back\\slash\n-n\n-e\n'
check "special characters arrive verbatim" "$(printf '%s' "$specials" | od -c)" \
  "$(printf '%s' "$specials" | in_bash 'f() { printf "%s\n" "$@"; }; frun -k f' | od -c)"
check "\$\$ is the caller's" same \
  "$(seq 4 | in_bash 'f() { [[ $$ == "$1" ]] && echo same || echo "differs $$ $1"; }; frun -l 1 -k f $$' | sort -u)"
check "globals persist across a worker's batches" "$(seq 5)" \
  "$(seq 5 | in_bash 'n=0; f() { n=$((n + 1)); echo $n; }; frun -j 1 -l 1 -k f')"
check "-s: the function reads its batch on stdin" 100000 \
  "$(seq 100000 | in_bash 'f() { wc -l; }; frun -s f' | awk '{s += $1} END {print s}')"
head -c 3000000 /dev/urandom >random.bin
check "-k -s: binary input byte-exact" "$(cksum <random.bin)" \
  "$(in_bash 'f() { cat; }; frun -k -s f' <random.bin | cksum)"
check "a record longer than ARG_MAX allows one argument to be" "300000 1" \
  "$( (head -c 300000 /dev/zero | tr '\0' x; printf '\ny\n') | in_bash 'f() { echo "${#1} ${#2}"; }; frun -L 2 f')"
check "-L 3: exact batches" "$(printf '3\n3\n3\n1\n')" \
  "$(seq 10 | in_bash 'f() { echo $#; }; frun -k -L 3 f')"
check "-l 4: at most 4 per batch" 0 \
  "$(seq 100 | in_bash 'f() { echo $#; }; frun -l 4 f' | awk '$1 > 4 {n++} END {print n + 0}')"
check "{} inserts the record" "$(seq 5 | sed 's/.*/<&>/')" \
  "$(seq 5 | in_bash 'f() { printf "%s\n" "$@"; }; frun -k -i f "<{}>"')"
check "{ID} never repeats" 50 \
  "$(seq 50 | in_bash 'f() { echo "$1"; }; frun -l 1 -I f "{ID}"' | sort -u | wc -l)"
check "a builtin as the command" "$(seq 10 | cksum)" \
  "$(seq 10 | in_bash 'frun -k -l 3 printf "%s\n"' | cksum)"
# A run keeps a stopped run's checkpoint and never writes over an existing --checkpoint-file:
# cases that compare or resume runs start without the journals earlier cases kept.
no_journals() { rm -f -- ./*.cp ./cp .frun_resume .frun_resume.*; }
no_journals
check "the : builtin" "0 no checkpoint" \
  "$(seq 100000 | in_bash 'frun :; echo "$? $([[ -e .frun_resume ]] && echo checkpoint || echo no checkpoint)"')"
check "-X runs the external command" "$(seq 10 | cksum)" \
  "$(seq 10 | in_bash 'echo() { builtin echo "function!"; }; frun -k -l 1 -X echo' | cksum)"
check "an external command through the builtin" "$(seq 1000 | cksum)" \
  "$(seq 1000 | in_bash 'frun -k -s cat' | cksum)"
check "nested frun" "$(seq 20 | cksum)" \
  "$(seq 20 | in_bash 'inner() { printf "%s\n" "$@" | frun -k -l 1 echo; }; frun -k -l 5 inner' | cksum)"
check "two runs back to back" "$(seq 200 | cksum) $(seq 200 | cksum)" \
  "$(in_bash 'f() { printf "%s\n" "$@"; }; a=$(seq 200 | frun -k f | cksum); b=$(seq 200 | frun -k f | cksum); echo "$a $b"')"
check "help through the builtin" "$("$repo/target/release/frun" --help 2>&1 | cksum)" \
  "$(in_bash 'frun --help' | cksum)"
check "bad flag: one line, status 2" "frun: unexpected argument '--bogus' found (see frun --help)|2" \
  "$(in_bash 'frun --bogus 2>&1 </dev/null; echo "|$?"' | tr -d '\n')"
check "empty input runs nothing" "0|" \
  "$(in_bash 'f() { echo ran; }; out=$(frun f </dev/null); echo "$?|$out"')"

# --- the same engine: the builtin and the binary agree, flag for flag ---------------------------
# Each case runs an external command (so both spawn it) over the same input, in both front ends.
bin=$repo/target/release/frun
printf 'a b\0c\nd\0\0e' >nul.bin
seq 5000 >lines.txt
parity() { # NAME INPUT ARGS...
  local name=$1 input=$2
  shift 2
  # Output and status, then stderr, compared as bytes (some outputs are binary). Separately:
  # stderr passes straight through, so where it falls among the batches' output is timing.
  local st=0
  no_journals
  { "$bin" "$@" <"$input" 2>parity.want.err || st=$?; echo "status $st"; } >parity.want
  no_journals
  in_bash 'frun "$@" 2>parity.got.err; echo "status $?"' "$@" <"$input" >parity.got
  cat parity.want.err >>parity.want
  cat parity.got.err >>parity.got
  if cmp -s parity.want parity.got; then
    check "same as the binary: $name" same same
  else
    check "same as the binary: $name" "$(od -c parity.want | head -n 5)" "$(od -c parity.got | head -n 5)"
  fi
}
parity "-k -L 10 echo" lines.txt -k -L 10 echo
parity "-0 -k printf" nul.bin -0 -k printf '[%s]\n'
parity "-d b" nul.bin -d b -k printf '<%s>\n'
parity "-n 7 (records)" lines.txt -n 7 -L 2 -k echo
parity "-L 3 -k" lines.txt -L 3 -k echo
parity "-i with a batch" lines.txt -k -L 4 -i echo 'x{}y'
parity "-s wc -l, -k" lines.txt -k -s -L 1000 wc -l
parity "-b 100 cat" random.bin -k -b 100 cat
parity "--block 10k" lines.txt -k --block 10k wc -c
parity "-N (dry run)" lines.txt -N -k -l 100 printf '%s\n'
parity "a failing command: 123" lines.txt -k -l 1000 sh -c 'exit 1'
parity "a missing command: 127" lines.txt no-such-command-here
parity "--nodes @2 -j 4 -k -L 10" lines.txt --nodes @2 -j 4 -k -L 10 echo
parity "--nodes @4 -j 4 -s -k" lines.txt --nodes @4 -j 4 -s -k -L 333 wc -l
seq 100000 >big.txt
parity "--shard 1/3 -k (one task's share)" big.txt --shard 1/3 -k -L 100 echo
parity "--shard 0/2 stdin mode" big.txt --shard 0/2 -s -k -L 333 wc -l
parity "--halt now,fail=1" lines.txt -j 1 -l 1 --halt now,fail=1 --checkpoint-file halt.cp sh -c 'exit 1'

# With NUMA placement each worker shell runs pinned to its node's CPU (logical nodes: one CPU each).
check "worker shells are pinned to their node" "200 200" "$(seq 200 | in_bash \
  'f() { grep Cpus_allowed_list: /proc/$BASHPID/status | cut -f2; }; frun --nodes @2 -j 2 -L 1 f' \
  | awk '/^[0-9]+$/ { n++ } END { print NR, n }')"

# A bash function split over three tasks (run here one after the other) into a results
# directory; frun merge, a builtin command too, puts the output back in input order.
check "a function over 3 shards, --results and merge" "$(sed 's/^/f/' big.txt | md5sum)" \
  "$(in_bash 'f() { printf "f%s\n" "$@"; }
    for i in 0 1 2; do frun --shard $i/3 --results res -k f <big.txt || echo "task $i: $?"; done
    frun merge res' | md5sum)"

# --- the calling shell is left as it was ---------------------------------------------------------
check "background job status kept" 7 \
  "$(seq 50 | in_bash '(sleep 0.3; exit 7) & bg=$!; f() { :; }; frun f; wait $bg; echo $?')"
in_bash 'trap "echo exit-trap >>trap.log" EXIT; f() { [[ $1 == 3 ]] && exit 0; :; }; seq 10 | frun -l 1 f; :' 2>/dev/null
check "the EXIT trap runs in the caller only" 1 "$(wc -l <trap.log)"
check "cwd, variables and options unchanged" same \
  "$(seq 10 | in_bash 'set -o noglob; x=1; before="$(pwd) $(set -o | md5sum) $x"
    f() { cd /; x=2; set +o noglob; }; frun f; after="$(pwd) $(set -o | md5sum) $x"
    [[ $before == "$after" ]] && echo same || echo "before $before after $after"')"
# A worker shell runs many batches: a `cd` in one must not move the next (each call starts where
# the first did, with $PWD and `pwd` saying so).
mkdir -p start
check "each call starts in the caller's directory" "$(printf '%s\n' "$PWD/start" "$PWD/start" | sort -u)" \
  "$(seq 20 | (cd start && in_bash 'f() { printf "%s %s\n" "$(pwd -P)" "$PWD"; cd /; }; frun -j1 -l1 f') \
    | tr ' ' '\n' | sort -u)"
# A call that closes or redirects fd 1 loses no later batch's output: that attempt is dropped and
# the batch runs again in a fresh worker shell.
for how in 'exec >&-' 'exec >/dev/null'; do
  check "a function that runs '$how' loses no output" "$(seq 30 | cksum)" \
    "$(seq 30 | in_bash 'n=0; f() { n=$((n + 1)); ((n % 3)) || '"$how"'; printf "%s\n" "$@"; }; frun -j1 -l1 -k f' 2>/dev/null | cksum)"
done
# Sampled from inside the function while frun runs in the caller itself ($$ is the caller;
# not in a pipeline, which would run frun in a subshell).
check "no thread in the caller while frun runs" 1 \
  "$(in_bash 'f() { ls /proc/$$/task | wc -l; }; frun -l 1 f <<<"$(seq 20)"' | sort -u | tr -d ' ')"

# --- failures (SPEC 5) ------------------------------------------------------------------------------
check "exit in a function once: retried, exactly once" "$(seq 1000 | cksum)" \
  "$(seq 1000 | in_bash 'f() { if [[ ! -e once ]]; then : >once; exit 9; fi; printf "%s\n" "$@"; }; frun -k f' | cksum)"
rm -f once
check "kill -9 \$BASHPID once: retried, exactly once" "$(seq 1000 | cksum)" \
  "$(seq 1000 | in_bash 'f() { if [[ ! -e once ]]; then : >once; kill -9 $BASHPID; fi; printf "%s\n" "$@"; }; frun -k f' | cksum)"
rm -f once
no_journals
out=$(seq 3 | in_bash 'f() { kill -9 $BASHPID; }; FRUN_RETRY_LIMIT=1 frun --checkpoint-file cp f; echo "status=$?"' 2>&1)
check "a persistent crash is given up: status 3" 1 "$(grep -c '^status=3$' <<<"$out")"
check "a persistent crash is named" 3 "$(grep -c '^frun: batch .* given up after 2 attempts; last: killed by signal 9' <<<"$out")"
rm -f cp
# A run stopped part-way (--halt here) gives the byte count to cut its output to, and a resume
# into a new file continues it exactly.
# (Record 50 fails a second late, so that even under load the records before it are out.)
out=$(seq 300 | in_bash 'f() { for a; do [[ $a == 50 && ! -e go ]] && { sleep 1; return 1; }; printf "%s\n" "$a"; done; }
  frun -k -l 1 --halt now,1 --checkpoint-file cp f >kill1.out; echo "status=$?"' 2>&1)
check "a halted run: status 1" 1 "$(grep -c '^status=1$' <<<"$out")"
keep=$(sed -n 's/.*truncate your output file to exactly \([0-9]*\) bytes.*/\1/p' <<<"$out")
kept=$(head -c "${keep:-0}" kill1.out | wc -l)
check "the stop gives the output's byte count: whole lines, before the failed record" \
  "$(seq "$kept" | cksum) yes" "$(head -c "${keep:-0}" kill1.out | cksum) $( ((kept > 0 && kept < 50)) && echo yes)"
: >go
seq 300 | in_bash 'f() { for a; do [[ $a == 50 && ! -e go ]] && return 1; printf "%s\n" "$a"; done; }
  frun -k -l 1 --resume cp f' >kill2.out 2>/dev/null
check "cut output + a resume into a new file = one run" "$(seq 300 | cksum)" \
  "$({ head -c "$keep" kill1.out; cat kill2.out; } | cksum)"
rm -f go
check "return N fails the batch: 123" 123 "$(seq 3 | in_bash 'f() { return 4; }; frun f 2>/dev/null; echo $?')"
no_journals
check "return N with -E is retried, then given up: 3" 3 \
  "$(seq 3 | in_bash 'f() { return 4; }; FRUN_RETRY_LIMIT=1 frun -E --checkpoint-file cp f 2>/dev/null; echo $?')"
check "FORKRUN_EXTRA_SETUP exit status" 5 \
  "$(seq 3 | in_bash 'f() { :; }; FORKRUN_EXTRA_SETUP="exit 5" frun f 2>/dev/null; echo $?')"
check "FORKRUN_EXTRA_SETUP runs before the batches" "$(seq 3 | sed 's/$/ 42/')" \
  "$(seq 3 | in_bash 'f() { echo "$1 $v"; }; FORKRUN_EXTRA_SETUP="v=42" frun -k -l 1 f')"
check "FORKRUN_EXTRA_FUNCS/VARS are accepted" "$(seq 3 | cksum)" \
  "$(seq 3 | in_bash 'f() { echo "$@"; }; FORKRUN_EXTRA_FUNCS=g FORKRUN_EXTRA_VARS=v frun -k -l 1 f' | cksum)"
check "a reader that goes away: status 0, no hang" 0 \
  "$(seq 1000000 | in_bash 'f() { printf "%s\n" "$@"; }; frun -k f | head -n 1 >/dev/null; echo "${PIPESTATUS[0]}"')"

# kill of the shell running a background frun stops frun as it would stop the binary: the
# checkpoint is kept, and resuming completes the output exactly once.
no_journals
in_bash 'f() { printf "%s\n" "$@"; sleep 0.02; }
  seq 3000 | frun -k -l 10 f >resumed.txt 2>/dev/null & sleep 1; kill -TERM $!; wait $!; echo "$?" >first.status
  seq 3000 | frun --resume .frun_resume -k -l 10 f >>resumed.txt 2>/dev/null; echo "$?" >second.status'
check "TERM to the shell running frun: 143, checkpoint kept" "143 yes" \
  "$(cat first.status) $([[ $(cat second.status) == 0 ]] && echo yes || echo no)"
check "resumed after TERM: the output is one whole run" "$(seq 3000 | cksum)" "$(cksum <resumed.txt)"

# --- GNU Parallel's bash companions: env_parallel and parset -------------------------------------
# Expectations are literals or made by bash alone (printf, declare -p of an array built by hand).
check "env_parallel: a function and a variable of the calling shell" $'f:a:42\nf:b:42' \
  "$(in_bash 'v=42; f() { echo "f:$1:$v"; }; env_parallel -k f ::: a b')"
check "env_parallel: --env NAME and --env=NAME are accepted and ignored" $'g:1\ng:2' \
  "$(in_bash 'g() { echo "g:$1"; }; env_parallel --env g -k --env=_ g ::: 1 2')"
check "env_parallel: --session/--end-session/--record-env do nothing and succeed" "0 0 0 ." \
  "$(in_bash 'env_parallel --session; a=$?; env_parallel --record-env; b=$?; env_parallel --end-session; echo "$a $b $? ."')"
check "env_parallel: an alias of the calling shell, and the shell's option restored" $'al 1 x\noff' \
  "$(in_bash 'alias al="echo al \$v"; v=1; env_parallel al ::: x; shopt expand_aliases | cut -f2')"
check "env_parallel: a value after ::: that reads --env is kept" "--env" \
  "$(in_bash 'env_parallel echo ::: --env')"
check "parset: an indexed array, one element per job, in input order" \
  "$(a=($'1' $'1\n2' $'1\n2\n3'); declare -p a | sed 's/^declare -a a=//')" \
  "$(in_bash 'parset a seq ::: 1 2 3; declare -p a | sed "s/^declare -a a=//"')"
check "parset: the array is cleared first" "declare -a a=([0]=\"x\")" \
  "$(in_bash 'a=(old old old); parset a echo ::: x; declare -p a')"
check "parset: an associative array, keyed by the arguments" "val  1=1|val  2=2|" \
  "$(in_bash 'declare -A as; f() { echo "${1: -1}"; }; parset as f ::: "val  1" "val  2"
    for k in "val  1" "val  2"; do printf "%s=%s|" "$k" "${as[$k]}"; done')"
check "parset: a key is data, never evaluated" "1 none" \
  "$(in_bash 'declare -A as; parset as echo ::: "\$(touch pwned)"; echo "${#as[@]} $([[ -e pwned ]] && echo made || echo none)"')"
check "parset: several variables, split at commas and blanks, array elements too" "[x  1][y][z][w]" \
  "$(in_bash 'parset "a,b c m[4]" echo ::: "x  1" y z w; printf "[%s]" "$a" "$b" "$c" "${m[4]}"')"
check "parset: trailing newlines cut, inner ones and a missing last newline kept, empty output empty" \
  "[a\\n\\nb][c][]" \
  "$(in_bash 'f() { case $1 in 1) printf "a\n\nb\n\n\n" ;; 2) printf c ;; esac; }
    parset a,b,c f ::: 1 2 3; printf "[%s]" "${a//$'"'\n'"'/\\n}" "$b" "$c"')"
check "parset: a function and a variable of the calling shell" "[w:1][w:2]" \
  "$(in_bash 'v=w; f() { echo "$v:$1"; }; parset x f ::: 1 2; printf "[%s]" "${x[@]}"')"
check "parset: failing jobs: the status counts them, every value is still set" "2 [o0][o1][o2]" \
  "$(in_bash 'f() { echo "o$1"; [[ $1 == 0 ]]; }; parset a,b,c f ::: 0 1 2 2>/dev/null; s=$?; echo "$s $(printf "[%s]" "$a" "$b" "$c")"')"
check "parset: standard error passes through, not into the value" "[out] err" \
  "$(in_bash 'f() { echo out; echo err >&2; }; parset a f ::: 1 2>e; printf "[%s] " "$a"; cat e')"
check "parset: too few names: an error, the named ones set" $'parset: Error: Too few named destination variables\n[1][2]' \
  "$(in_bash 'parset a,b echo ::: 1 2 3 2>&1; printf "[%s]" "$a" "$b"')"
check "parset: an invalid name is refused, nothing runs" "255 no" \
  "$(in_bash 'parset -bad touch ::: ran 2>/dev/null; echo "$? $([[ -e ran ]] && echo yes || echo no)"')"
check "parset: under set -Eeuo pipefail" "[1][2]" \
  "$(in_bash 'set -Eeuo pipefail; parset a,b echo ::: 1 2; printf "[%s]" "$a" "$b"')"
check "parset: a --tag of the caller's (argument or \$PARALLEL) is refused, a value --tag is not" \
  "255 255 [--tag]" \
  "$(in_bash 'parset a --tag echo ::: 1 2>/dev/null; x=$?; PARALLEL=--tag parset a echo ::: 1 2>/dev/null
    y=$?; parset a echo ::: --tag; echo "$x $y [$a]"')"
check "env_parset is parset" "[q]" "$(in_bash 'env_parset a echo ::: q; printf "[%s]" "$a"')"

# GNU Parallel's own env_parallel/parset test functions (tests/gnu-parallel, set aside in the
# `parallel` ratchet) with this frun.bash as env_parallel.bash: a ratchet of agreeing ones.
# par_parset2 waits for -v to print to stdout, par_parset_tee for --tee,
# par_do_not_export_PARALLEL_ENV for {= =}; par_totaljobs needs pv, par_parset_assoc_arr ssh
# and ksh/zsh (GNU Parallel cannot pass those two here either).
ran=yes
python3 "$repo/tests/gnu-parallel/run.py" --impl frun --frun "$repo/target/release/frun" \
  --bash-companions "$FRUN_BASH" --table companions.tsv >/dev/null 2>companions.err || ran=no
check "GNU's env_parallel/parset functions: run.py runs them" "yes" "$ran"
touch companions.tsv
agrees=$(awk -F'\t' '$3 == "agrees"' companions.tsv | wc -l)
check "GNU's env_parallel/parset functions: at least 4 agree" 1 "$((agrees >= 4))"
for f in par_env_parallel_pipefail par_extglob par_empty_command par_parset; do
  check "GNU's $f agrees" agrees "$(awk -F'\t' -v f="$f" '$1 == f { print $3 }' companions.tsv)"
done

# --- forkrun's scripts, unchanged ------------------------------------------------------------
# -U with a function: the worker shell splits and globs each record (with the caller's IFS),
# nothing else; the function still sees the caller's variables.
mkdir -p globs && touch globs/g1.x globs/g2.x
check "-U: a function gets each record word-split" "$(printf '2\n3\n')" \
  "$(printf 'a b\nc d e\n' | in_bash 'f() { echo $#; }; frun -U -l 1 -k f')"
check "-U: records are globbed, fixed words stay whole" "$(printf '<p q>'; printf '<%s>' globs/g*.x; printf '<z>\n')" \
  "$(echo 'globs/g*.x z' | in_bash 'f() { printf "<%s>" "$@"; echo; }; frun -U f "p q"')"
check "-U: no command substitution, no command separators" '<$(echo><no)><;><`x`>' \
  "$(echo '$(echo no) ; `x`' | in_bash 'f() { printf "<%s>" "$@"; }; frun -U f')"
check "-U: the caller's IFS and variables" "a-b-c 7" \
  "$(echo 'a:b:c' | in_bash 'n=7; f() { local IFS=-; echo "$* $n"; }; IFS=: frun -U f')"
check "-U -i: the {} word is split" "<xa><by>" \
  "$(echo 'a b' | in_bash 'f() { printf "<%s>" "$@"; }; frun -U -i f "x{}y"')"
check "-U: a builtin" "$(printf 'a\nb\nc\n')" \
  "$(echo 'a b c' | in_bash 'frun -U printf "%s\n"')"
# --nodes N is a count of nodes (forkrun's meaning): more than the machine has is all of them.
check "--nodes=2 with a function" "$(seq 10 | sed 's/^/T:/')" \
  "$(seq 10 | in_bash 'f() { echo "T:$*"; }; frun --nodes=2 -l 1 f' | sort -V)"
check "--nodes 5,7 (nodes this machine lacks) with a function" "$(seq 10 | cksum)" \
  "$(seq 10 | in_bash 'f() { printf "%s\n" "$@"; }; frun --nodes 5,7 -k f' | cksum)"
# A stopped run's checkpoint is also ./.forkrun_resume (the same file), which a forkrun script
# resumes from; the completed resume removes both names.
no_journals
rm -f .forkrun_resume
seq 300 | in_bash 'f() { for a; do [[ $a == 50 && ! -e .forkrun_resume ]] && kill -9 $BASHPID; printf "%s\n" "$a"; done; }
  FRUN_RETRY_LIMIT=0 frun -k -l 1 f' >fr.out 2>/dev/null || true
check "a stopped run's checkpoint is also .forkrun_resume" "same file" \
  "$([[ -f .forkrun_resume && $(stat -c %i .forkrun_resume) == $(stat -c %i .frun_resume) ]] && echo same file || echo "no: $(ls -a)")"
seq 300 | in_bash 'f() { for a; do [[ $a == 50 && ! -e .forkrun_resume ]] && kill -9 $BASHPID; printf "%s\n" "$a"; done; }
  frun -k -l 1 --resume .forkrun_resume f' >>fr.out 2>/dev/null || true
check "resumed from .forkrun_resume: every record once" "$(seq 300 | cksum)" "$(sort -n fr.out | cksum)"
check "the completed resume removes both names" "none" \
  "$([[ -e .forkrun_resume || -e .frun_resume ]] && echo present || echo none)"
# --halt now,N: forkrun's short form of now,fail=N.
rm -f ran
check "--halt now,2: stops at the second failure, status 1" "1 2" \
  "$(seq 10 | in_bash 'f() { echo x >>ran; return 1; }; frun -j 1 -l 1 --halt now,2 f 2>/dev/null; echo "$? $(wc -l <ran)"')"
check "--halt now,2 says so in forkrun's words" 1 \
  "$(seq 10 | in_bash 'f() { return 1; }; frun -j 1 -l 1 --halt now,2 --checkpoint-file h2.cp f 2>&1 >/dev/null' | grep -c 'Halt condition met (2 failed batches)')"
# A batch of the size asked for is the unit, as in forkrun: a record that keeps failing takes
# its -l 5 batch down; the other batches run.
check "-l 5: a batch that keeps failing is given up whole" "$(seq 5 | cksum)" \
  "$(seq 10 | in_bash 'f() { for a; do [[ $a == 6 ]] && exit 1; echo "$a"; done; }; frun -l 5 --checkpoint-file l5.cp f 2>/dev/null' | sort -n | cksum)"
check "a given-up batch is reported as skipped" 1 \
  "$(seq 3 | in_bash 'f() { exit 1; }; FRUN_RETRY_LIMIT=0 frun -E --checkpoint-file sk.cp f 2>&1 >/dev/null' | grep -c 'given up after .* and skipped')"

# Ctrl-C: SIGINT to the whole foreground group ends the run and every worker shell.
setsid bash --norc -c 'source "$FRUN_BASH"; f() { sleep 30.3; }; seq 100 | frun -l 1 f' 2>/dev/null &
leader=$!
sleep 1
kill -INT -- -"$leader"
start=$SECONDS
wait "$leader" 2>/dev/null || true
check "SIGINT ends the run promptly" yes "$( ((SECONDS - start < 5)) && echo yes || echo no)"
# Worker shells lead their own process groups, so they are looked for by what they run.
check "SIGINT leaves no worker behind" 0 "$(pgrep -c -f 'sleep 30.3' || true)"
check "SIGINT leaves nothing in the caller's group" 0 "$(pgrep -c -g "$leader" || true)"

# Sweeps and the GNU Parallel personality run the user's functions (expectations from a plain
# bash loop over the same values).
check "sweep runs a function per tuple" "$(for a in x y; do for b in 1 2; do echo "$a=$b"; done; done)" \
  "$(in_bash 'f() { for t; do :; done; echo "$1=$2"; }; frun -k -l 1 f ::: x y ::: 1 2')"
check "frun parallel runs a function, one quoted value per job" "$(printf '%s\n' '1:a b' '1:c')" \
  "$(in_bash 'f() { echo "$#:$1"; }; frun parallel -k f ::: "a b" c')"
check "frun parallel: a function anywhere in a shell line" "$(printf '%s\n' A1 A2 A3)" \
  "$(in_bash 'up() { tr a A; }; frun parallel -k "echo a{} | up" ::: 1 2 3')"
check "frun xargs runs a function with xargs' words" "$(printf '%s\n' 'f:a' 'f:b c' 'f:d')" \
  "$(printf 'a "b c"\nd\n' | in_bash 'f() { echo "f:$*"; }; frun xargs -n1 f')"
check "frun parallel --tag runs a function" "$(printf 'x\tf:x\ny\tf:y')" \
  "$(in_bash 'f() { echo "f:$*"; }; frun parallel -k --tag f ::: x y')"
check "frun parallel: variables of the shell" "v=7 1" \
  "$(in_bash 'v=7; frun parallel "echo v=\$v {}" ::: 1')"
# --tee --pipe needs a feeder thread in frun's own process: the shell's frun says so, runs
# nothing, and the shell goes on (--pipepart --tee needs none: each job opens the file).
check "frun parallel --tee --pipe in the shell: one line, status 255, nothing run" \
  "$(printf '%s\n' "frun: --tee with --pipe runs in frun parallel, not in the shell's frun" status=255)" \
  "$(in_bash 'seq 3 | frun parallel --tee --pipe ::: wc 2>&1; echo "status=$?"')"

# --- C plugins (-C): the worker shells load the library and call the function -------------------
if command -v cc >/dev/null; then
  cat >plugin.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
int echo_args(int argc, char **argv) { for (int i = 0; i < argc; i++) printf("%s\n", argv[i]); return 0; }
int cat_stdin(int argc, char **argv) {
  char b[4096]; size_t n; (void)argc; (void)argv;
  while ((n = fread(b, 1, sizeof b, stdin)) > 0) fwrite(b, 1, n, stdout);
  return 0;
}
/* Crashes the first time it sees record 50 (a mark file says it did). */
int crash_once(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "50")) { int fd = open("crashed", O_CREAT | O_EXCL | O_WRONLY, 0600);
      if (fd >= 0) { close(fd); *(volatile int *)0 = 1; } }
  return echo_args(argc, argv);
}
int forkrun_use_ctx = 1;
struct forkrun_ctx { unsigned long long idx, off, len; unsigned ver, wid, node, kills, maj, min; int fd; char d; unsigned char c[3]; };
int lengths(int argc, char **argv, const struct forkrun_ctx *c) { (void)argv; printf("%llu %d\n", c->len, argc); return 0; }
EOF
  cc -O2 -shared -fPIC -o plugin.so plugin.c
  # lengths needs the context: a library of its own (the opt-in is per library).
  printf '%s\n' '#include <stdio.h>' >ctx2.c
  sed -n '/forkrun_use_ctx/,$p' plugin.c >>ctx2.c
  cc -O2 -shared -fPIC -o ctx.so ctx2.c
  plain=$(sed '/forkrun_use_ctx/,$d' plugin.c)
  printf '%s\n' "$plain" >plain.c
  cc -O2 -shared -fPIC -o plain.so plain.c
  check "-C in the builtin: output in order equals the input" "$(seq 20000 | cksum)" \
    "$(in_bash 'seq 20000 | frun -k -C ./plain.so:echo_args' | cksum)"
  check "-C -s in the builtin: the batch on stdin" "$(seq 20000 | cksum)" \
    "$(in_bash 'seq 20000 | frun -k -s -C ./plain.so:cat_stdin' | cksum)"
  check "-C in the builtin: a crash once heals" "$(seq 100 | cksum)" \
    "$(in_bash 'seq 100 | frun -k -C ./plain.so:crash_once' | cksum)"
  check "-C in the builtin: forkrun's context covers the input" "$(seq 5000 | wc -c) 5000" \
    "$(in_bash 'seq 5000 | frun -C ./ctx.so:lengths' | awk '{b += $1; r += $2} END {print b, r}')"
  check "-C in the builtin: a missing function is said before any work" "127 1" \
    "$(in_bash 'seq 3 | frun -C ./plain.so:nope 2>err; echo $? $(grep -c "no function nope" err)')"
  # fd_in is the spool, with the batch at the context's offset for its length: plugins that
  # read their batch there and print it give the input back (forkrun's context and frun's own).
  cat >fdin.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int forkrun_use_ctx = 1;
struct forkrun_ctx { unsigned long long idx, off, len; unsigned ver, wid, node, kills, maj, min; int fd; char d; unsigned char c[3]; };
int from_fd(int argc, char **argv, const struct forkrun_ctx *c) {
  char *b = malloc(c->len + 1); (void)argc; (void)argv;
  ssize_t got = pread(c->fd, b, c->len, (off_t)c->off);
  if (got == (ssize_t)c->len) fwrite(b, 1, c->len, stdout);
  free(b);
  return got == (ssize_t)c->len ? 0 : 9;
}
EOF
  cc -O2 -shared -fPIC -o fdin.so fdin.c
  cat >fdin_frun.c <<'EOF'
#include <stdlib.h>
#include <unistd.h>
#include "frun_plugin.h"
FRUN_PLUGIN_USES_CTX;
int from_fd(int argc, char **argv, const struct frun_ctx *c) {
  char *b = malloc(c->batch_bytes + 1); (void)argc; (void)argv;
  ssize_t got = pread(c->fd_in, b, c->batch_bytes, (off_t)c->spool_offset);
  int ok = got == (ssize_t)c->batch_bytes && write(c->fd_out, b, got) == got;
  free(b);
  return ok ? 0 : 9;
}
EOF
  cc -O2 -shared -fPIC -I"$repo/include" -o fdin_frun.so fdin_frun.c
  seq 30000 >fdin.txt
  check "-C in the builtin: forkrun's fd_in holds the batch (piped input)" "$(seq 30000 | cksum)" \
    "$(in_bash 'seq 30000 | frun -k -C ./fdin.so:from_fd' | cksum)"
  check "-C in the builtin: forkrun's fd_in holds the batch (input file)" "$(cksum <fdin.txt)" \
    "$(in_bash 'frun -k -C ./fdin.so:from_fd <fdin.txt' | cksum)"
  check "-C in the builtin: frun's fd_in holds the batch" "$(seq 30000 | cksum)" \
    "$(in_bash 'seq 30000 | frun -k -C ./fdin_frun.so:from_fd' | cksum)"
fi

# Ctrl-C at an interactive prompt (a pty made by script(1)): the run ends, the prompt comes
# back, and no worker's command is left running.
if command -v script >/dev/null; then
  {
    printf '%s\n' 'source "$FRUN_BASH"' 'f() { sleep 31.7; }' 'seq 10 | frun -l 1 f'
    sleep 2
    printf '\003'
    sleep 2
    printf '%s\n' 'echo "prompt back: $((6 * 7))"' 'exit'
  } | timeout 30 script -qfc "bash --norc -i" /dev/null >pty.log 2>&1 || true
  check "Ctrl-C at a prompt: the prompt comes back" 1 "$(tr -d '\r' <pty.log | grep -c 'prompt back: 42')"
  check "Ctrl-C at a prompt: no worker command left" 0 "$(pgrep -c -f 'sleep 31.7' || true)"
fi

printf '%d passed, %d failed\n' "$passed" "${#failed[@]}"
((${#failed[@]} == 0))
