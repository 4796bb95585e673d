#!/usr/bin/env bash
# Runs forkrun's own comprehensive test suite (UNIT_TESTS/test_frun_comprehensive.sh of the
# forkrun project; not kept in this repository) against frun.bash, and prints one line per case:
# PASS, FAIL (with the suite's reason) or SKIP, then the counts.
# Usage: run-suite.sh SUITE [SECTION]
#   FRUN_BASH=path uses an already built frun.bash; otherwise it is built as tests/bash/run.sh does.
#   SECTION (e.g. M) runs that section only, as the suite's own SECTION variable does.
# CI has no network and this repository does not carry the suite, so CI does not run this: each
# case frun fixed has its own test (tests/bash/run.sh, tests/numa.rs); README.md ("Migrating from
# forkrun") lists the cases that still fail and why.
set -euo pipefail
(($# >= 1)) || { echo "usage: $0 SUITE [SECTION]" >&2; exit 2; }
suite=$(realpath -- "$1")
section=${2:-}
[[ -f $suite ]] || { echo "$0: $1: no such file" >&2; exit 2; }
cd "$(dirname "$0")/../.."
repo=$PWD

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
FRUN_BASH=$(realpath -- "$FRUN_BASH")

# The suite looks for frun.bash next to itself: give it a directory of its own holding both,
# and run it from there (some cases write journals into the current directory).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/UNIT_TESTS"
cp -- "$suite" "$work/UNIT_TESTS/suite.sh"
ln -s -- "$FRUN_BASH" "$work/UNIT_TESTS/frun.bash"
cd "$work"
# frun's binary on PATH too: the suite's cases that start a fresh bash find `frun` either way.
export PATH="$repo/target/release:$PATH"

st=0
SECTION=$section bash UNIT_TESTS/suite.sh >suite.log 2>&1 </dev/null || st=$?
# The suite marks each case with ✓ (pass), ✗ (fail: name — reason) or ○ (skip), after an
# indent, in colour; the summary repeats the failures after two spaces and a ✗ in colour too.
# Its self-tests (names starting _selftest) must fail: a ✓ line saying so follows each.
sed 's/\x1b\[[0-9;]*m//g' suite.log | awk '
  /^SUMMARY$/ { exit }
  /^  \xe2\x9c\x93 run_test_sorted correctly caught/ { if (self != "") { print "PASS " self; pass++; self = "" }; next }
  /^  \xe2\x9c\x97 _selftest/ { sub(/^  \xe2\x9c\x97 /, ""); sub(/ \xe2\x80\x94 .*/, ""); self = $0; next }
  /^  \xe2\x9c\x93 / { sub(/^  \xe2\x9c\x93 /, ""); print "PASS " $0; pass++; next }
  /^  \xe2\x9c\x97 / { sub(/^  \xe2\x9c\x97 /, ""); print "FAIL " $0; fail++; next }
  /^  \xe2\x97\x8b / { sub(/^  \xe2\x97\x8b /, ""); print "SKIP " $0; skip++; next }
  END { printf "%d passed, %d failed, %d skipped\n", pass, fail, skip }'
# The suite's own summary, for its totals.
sed 's/\x1b\[[0-9;]*m//g' suite.log | grep -E '^(Total|Passed|Failed|Skipped): ' || true
exit "$st"
