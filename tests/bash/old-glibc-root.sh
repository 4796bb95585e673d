#!/usr/bin/env bash
# Runs a smoke-test script against frun.bash inside a Debian 11 (bullseye) root: bash 5.1 and
# glibc 2.31, older than most build hosts. Needs root (debootstrap, chroot, mount).
#
# usage: tests/bash/old-glibc-root.sh [ROOT_DIR [FRUN_BASH SMOKE_SCRIPT]]
#   ROOT_DIR      where the root is kept between runs; "" means the default,
#                 ${XDG_CACHE_HOME:-$HOME/.cache}/frun/bullseye-root
#   FRUN_BASH     frun.bash to test; copied to /frun-test/frun.bash in the root
#   SMOKE_SCRIPT  run there as `/bin/bash /frun-test/<name> /frun-test/frun.bash` from /frun-test,
#                 with FRUN_BASH=/frun-test/frun.bash; its exit status is the script's
# With only ROOT_DIR (or nothing), the root is just created. FRUN_DEBIAN_MIRROR overrides the
# mirror (default http://deb.debian.org/debian). FRUN_BLOB (a glibc floor) is passed on, so
# frun.bash loads that blob.
set -euo pipefail
shopt -s inherit_errexit

die() { printf 'old-glibc-root.sh: error: %s\n' "$*" >&2; exit 2; }
step() { printf '==> %s\n' "$*" >&2; }

if (($# > 3 || $# == 2)); then die "usage: $0 [ROOT_DIR [FRUN_BASH SMOKE_SCRIPT]]"; fi
root=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/frun/bullseye-root}
frun_bash=${2-}
smoke=${3-}
marker=.frun-bullseye-root-complete

((EUID == 0)) || die "must run as root (debootstrap, chroot and mount need it)"
if [[ -n $smoke ]]; then
  [[ -f $frun_bash ]] || die "no such file: $frun_bash"
  [[ -f $smoke ]] || die "no such file: $smoke"
fi

mkdir -p "$(dirname "$root")"
root=$(cd "$(dirname "$root")" && pwd -P)/$(basename "$root")

# Concurrent runs share the root (and its mounts): one at a time.
exec {lock}>"$root.lock"
flock "$lock"

# --- the root: built once into ROOT_DIR.partial, moved into place when complete --------------
# shellcheck source=tests/debian-root.sh
source "$(dirname "$0")/../debian-root.sh"
debian_root bullseye "$root" "$marker"

[[ -n $smoke ]] || exit 0

# --- the smoke test -------------------------------------------------------------------------
rm -rf -- "$root/frun-test"
mkdir -p "$root/frun-test"
cp -- "$frun_bash" "$root/frun-test/frun.bash"
smoke_name=$(basename "$smoke")
[[ $smoke_name != frun.bash ]] || smoke_name=smoke-$smoke_name
cp -- "$smoke" "$root/frun-test/$smoke_name"


# /proc is needed for /proc/self/fd/N and /dev/fd/N (process substitution); /dev/shm is a plain
# directory in a debootstrap root, a tmpfs on a real system.
if ! mountpoint -q "$root/proc"; then
  mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
  mounted+=("$root/proc")
fi
mkdir -p "$root/dev/shm"
if ! mountpoint -q "$root/dev/shm"; then
  mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$root/dev/shm"
  mounted+=("$root/dev/shm")
fi

step "running $smoke_name in the bullseye root"
child=
# shellcheck disable=SC2317 # called from the INT and TERM traps
stop() {
  if [[ -n $child ]]; then
    kill -"$1" -- "-$child" 2>/dev/null || true
    wait "$child" || true
  fi
  exit "$2"
}
trap 'stop INT 130' INT
trap 'stop TERM 143' TERM
# In its own process group (set -m) so that a signal to this script reaches the whole test.
set -m
env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" FRUN_BASH=/frun-test/frun.bash \
  ${FRUN_BLOB:+FRUN_BLOB="$FRUN_BLOB"} \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  chroot "$root" /bin/bash -c 'cd /frun-test && exec /bin/bash "$@"' bash \
  "/frun-test/$smoke_name" /frun-test/frun.bash &
child=$!
set +m
status=0
wait "$child" || status=$?
exit "$status"
