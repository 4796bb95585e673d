#!/usr/bin/env bash
# Runs README.md's first command, exactly as written there, in a fresh Debian 12 (bookworm) root:
# debootstrap's minimal system plus what installing Rust needs (gcc as its linker, and
# ca-certificates for crates.io), and this machine's Rust toolchain mounted read-only (it cannot
# be downloaded here). Nothing else is installed: no pkg-config, libhwloc-dev or libudev-dev, so
# the command shows that a plain `cargo build` needs none of them. The command's stdout must equal
# the same checksums made by `xargs sha256sum` in that root, and its --stats summary must be there.
# Needs root (debootstrap, chroot, mount).
#
# usage: tests/fresh-root.sh [ROOT_DIR]
#   ROOT_DIR  where the root is kept between runs (default
#             ${XDG_CACHE_HOME:-$HOME/.cache}/frun/bookworm-root); built once, with a marker file.
# FRUN_DEBIAN_MIRROR overrides the mirror (default http://deb.debian.org/debian).
set -euo pipefail
shopt -s inherit_errexit

die() { printf 'fresh-root.sh: error: %s\n' "$*" >&2; exit 2; }
step() { printf '==> %s\n' "$*" >&2; }
fail() { printf 'fresh-root.sh: FAIL: %s\n' "$*" >&2; exit 1; }

(($# <= 1)) || die "usage: $0 [ROOT_DIR]"
((EUID == 0)) || die "must run as root (debootstrap, chroot and mount need it)"
repo=$(cd "$(dirname "$0")/.." && pwd -P)
root=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/frun/bookworm-root}
marker=.frun-bookworm-root-complete
mkdir -p "$(dirname "$root")"
root=$(cd "$(dirname "$root")" && pwd -P)/$(basename "$root")

# The command under test: the first line of README.md's first code block.
command=$(awk '/^```/ { if (inside) exit; inside = 1; next } inside { print; exit }' "$repo/README.md")
[[ $command == cargo\ build* ]] || die "README.md's first command is not a cargo build: '$command'"

exec {lock}>"$root.lock"
flock "$lock"

in_root() {
  env -i HOME=/root LANG=C.UTF-8 PATH=/opt/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    chroot "$root" /bin/bash -c "$1"
}

# --- the root: built once into ROOT_DIR.partial, moved into place when complete --------------
# shellcheck disable=SC2317 # called by debian_root
rust_prerequisites() {
  cp -L /etc/resolv.conf "$1/etc/resolv.conf"
  mount_proc "$1"
  step "installing Rust's prerequisites in the root: gcc (its linker), ca-certificates"
  env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    chroot "$1" /bin/bash -c 'apt-get update -qq && apt-get install -y -qq gcc libc6-dev ca-certificates >/dev/null'
  umount "$1/proc"
  mounted=()
}
# shellcheck source=tests/debian-root.sh
source "$repo/tests/debian-root.sh"
debian_root bookworm "$root" "$marker" rust_prerequisites

mount_proc "$root"
host_network "$root"
# This machine's toolchain, read-only, as /opt/rust (cargo and rustc without rustup).
sysroot=$(rustc --print sysroot)
mkdir -p "$root/opt/rust"
mountpoint -q "$root/opt/rust" || {
  mount --bind "$sysroot" "$root/opt/rust"
  mount -o remount,bind,ro "$root/opt/rust"
  mounted+=("$root/opt/rust")
}

# What the root must not have, or the test would prove nothing.
for absent in pkg-config libhwloc-dev libudev-dev; do
  if in_root "dpkg-query -W -f='\${Status}' $absent 2>/dev/null | grep -q 'install ok installed'"; then
    fail "the root has $absent installed; it must show that nothing but Rust and gcc is needed"
  fi
done

# The project as committed plus local edits (the tracked files), in a new directory.
rm -rf -- "$root/root/frun" "$root/root/.cargo"
mkdir -p "$root/root/frun"
(cd "$repo" && git ls-files -z | tar --null -T - -c) | tar -x -C "$root/root/frun"

step "README's first command in the root: $command"
status=0
in_root "cd /root/frun && { $command; } >/tmp/readme.out 2>/tmp/readme.err" || status=$?
if ((status != 0)); then
  tail -n 30 "$root/tmp/readme.err" >&2
  fail "README's first command exited $status in a fresh bookworm root"
fi
# The same checksums, made serially by xargs in the root.
# The same files as README's command takes (its `head -N`), checksummed by xargs.
count=$(grep -o 'head -[0-9]*' <<<"$command" | head -n 1)
[[ -n $count ]] || die "README.md's first command has no 'head -N'"
in_root "find /usr/share -type f | $count | xargs -d '\n' sha256sum | tail -3 >/tmp/expected.out"
# What README promises must be true here: at least N files on a fresh Debian 12.
have=$(in_root 'find /usr/share -type f | wc -l')
((have >= ${count#head -})) || fail "README's command takes ${count#head -} files; a fresh root has only $have"

if ! cmp -s "$root/tmp/readme.out" "$root/tmp/expected.out"; then
  diff "$root/tmp/expected.out" "$root/tmp/readme.out" >&2 || true
  fail "its output differs from xargs sha256sum over the same files"
fi
[[ $(wc -l <"$root/tmp/readme.out") == 3 ]] || fail "expected 3 lines of checksums, got: $(cat "$root/tmp/readme.out")"
grep -q '^frun: stats: ' "$root/tmp/readme.err" ||
  fail "no --stats summary on stderr: $(tail -n 5 "$root/tmp/readme.err")"
rm -rf -- "$root/root/frun" "$root/root/.cargo"
printf 'fresh-root.sh: PASS: README'\''s first command works in a fresh bookworm root (%s)\n' \
  "$(grep -m1 '^frun: stats: ' "$root/tmp/readme.err")"
