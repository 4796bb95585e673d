#!/usr/bin/env bash
# shellcheck disable=SC2317 # the functions are called by frun
# A short check that a frun.bash loads and works on this system: usage: smoke.sh FRUN_BASH.
# Made for systems other than the build host (an old-glibc root); tests/bash/run.sh is the suite.
set -u
# shellcheck source=/dev/null
source "$1" || { echo "smoke: frun.bash did not load" >&2; exit 1; }
bad=0
expect() { # NAME EXPECTED ACTUAL
  if [[ $2 == "$3" ]]; then echo "ok   $1"; else echo "FAIL $1: expected $2, got $3"; bad=1; fi
}
expect "frun is a builtin" builtin "$(type -t frun)"
declare -A seen=([x]=1)
f() { printf '%s\n' "$@"; }
expect "function, -k" "$(seq 20000 | cksum)" "$(seq 20000 | frun -k f | cksum)"
g() { echo "${seen[x]}"; }
expect "associative array in the worker" 1 "$(echo x | frun g)"
h() { wc -l; }
expect "-s" 20000 "$(seq 20000 | frun -s h | awk '{s += $1} END {print s}')"
once=$(mktemp -u)
k() { if [[ ! -e $once ]]; then : >"$once"; kill -9 "$BASHPID"; fi; printf '%s\n' "$@"; }
expect "a killed worker shell is replaced" "$(seq 1000 | cksum)" "$(seq 1000 | frun -k k | cksum)"
rm -f "$once"
expect "an external command" "$(seq 100 | cksum)" "$(seq 100 | frun -k -s cat | cksum)"
echo "bash $BASH_VERSION, $(getconf GNU_LIBC_VERSION)"
exit "$bad"
