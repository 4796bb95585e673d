#!/usr/bin/env bash
# README's way to build frun without the rustup script: a distribution's own Rust. In a fresh
# Debian 13 (trixie) root, `apt-get install cargo gcc` and nothing else, then `cargo build
# --locked` of the checkout (a debug build: what is proved is that it compiles, quicker), and
# the built frun does a real job (checked against xargs). Proves the crate's rust-version
# (Cargo.toml) holds for Debian's packaged Rust.
# usage: tests/distro-rust.sh [ROOT_DIR]   (as root: debootstrap, chroot)
set -euo pipefail
shopt -s inherit_errexit

die() { printf 'distro-rust.sh: error: %s\n' "$*" >&2; exit 2; }
step() { printf '==> %s\n' "$*" >&2; }
fail() { printf 'distro-rust.sh: FAIL: %s\n' "$*" >&2; exit 1; }

(($# <= 1)) || die "usage: $0 [ROOT_DIR]"
((EUID == 0)) || die "must run as root (debootstrap, chroot and mount need it)"
repo=$(cd "$(dirname "$0")/.." && pwd -P)
root=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/frun/trixie-cargo-root}
marker=.frun-trixie-cargo-root-complete
mkdir -p "$(dirname "$root")"
root=$(cd "$(dirname "$root")" && pwd -P)/$(basename "$root")
exec {lock}>"$root.lock"
flock "$lock"

in_root() {
  env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    chroot "$root" /bin/bash -c "$1"
}
distro_rust() {
  cp -L /etc/resolv.conf "$1/etc/resolv.conf"
  mount_proc "$1"
  step "apt-get install cargo gcc (Debian's own Rust) in the root"
  env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    chroot "$1" /bin/bash -c 'apt-get update -qq && apt-get install -y -qq cargo gcc libc6-dev ca-certificates >/dev/null'
  umount "$1/proc"
  mounted=()
}
# shellcheck source=tests/debian-root.sh
source "$repo/tests/debian-root.sh"
debian_root trixie "$root" "$marker" distro_rust

mount_proc "$root"
host_network "$root"
rm -rf -- "$root/root/frun" "$root/root/.cargo"
mkdir -p "$root/root/frun"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -c --ignore-failed-read 2>/dev/null) |
  tar -x -C "$root/root/frun"
version=$(in_root 'cargo --version')
step "cargo build --locked with $version"
status=0
in_root 'cd /root/frun && cargo build --locked >/tmp/build.log 2>&1' || status=$?
if ((status != 0)); then
  tail -n 30 "$root/tmp/build.log" >&2
  fail "frun does not build with Debian 13's $version (exit $status)"
fi
in_root 'find /usr/share -type f | head -3000 | /root/frun/target/debug/frun -k sha256sum >/tmp/got'
in_root 'find /usr/share -type f | head -3000 | xargs -d "\n" sha256sum >/tmp/want'
cmp -s "$root/tmp/got" "$root/tmp/want" || fail "frun -k sha256sum differs from xargs sha256sum"
printf 'distro-rust.sh: frun builds with Debian 13'"'"'s %s and checksums 3000 files as xargs does\n' "$version"
