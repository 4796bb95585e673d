# shellcheck shell=bash
# Sourced by the scripts that test frun in a debootstrapped Debian root (tests/fresh-root.sh,
# tests/bash/old-glibc-root.sh). Defines:
#   debian_root SUITE ROOT MARKER [SETUP]
# Builds a minbase root of SUITE into ROOT.partial unless ROOT already holds MARKER, runs
# `SETUP PARTIAL_DIR` there when given, writes MARKER and moves it into place, so an interrupted
# build is never taken for a complete one. FRUN_DEBIAN_MIRROR overrides the mirror. The caller
# defines die and step, holds a lock on ROOT, and runs as root.
#
# Also: mount_proc ROOT (mounted once, recorded in `mounted`); host_network ROOT (this machine's
# resolver, and the certificate authorities it trusts, into ROOT; needs ca-certificates there).
# `mounted` lists what the caller mounted (append each mount point); an EXIT trap
# unmounts them in reverse order.
mounted=()
# shellcheck disable=SC2317 # called from the EXIT trap
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -- "${mounted[i]}" 2>/dev/null || umount -l -- "${mounted[i]}" || true
  done
}
trap unmount_all EXIT

debian_root() {
  local suite=$1 root=$2 marker=$3 setup=${4-} partial
  local mirror=${FRUN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [[ -f $root/$marker ]] && return 0
  [[ ! -e $root ]] || die "$root exists but is not a complete root (no $marker); remove it"
  if ! command -v debootstrap >/dev/null || [[ ! -f $keyring ]]; then
    step "installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap debian-archive-keyring >/dev/null
  fi
  partial=$root.partial
  rm -rf -- "$partial"
  step "creating the $suite root in $root (about a minute, ~200 MB)"
  debootstrap --variant=minbase --keyring="$keyring" "$suite" "$partial" "$mirror" >&2 ||
    die "debootstrap failed (its log: $partial/debootstrap/debootstrap.log)"
  [[ -z $setup ]] || "$setup" "$partial"
  date -u +%FT%TZ >"$partial/$marker"
  mv -- "$partial" "$root"
}

mount_proc() {
  mountpoint -q "$1/proc" && return
  mount -t proc -o nosuid,nodev,noexec proc "$1/proc"
  mounted+=("$1/proc")
}

# The host's network setup, as a machine on this network would have it: its resolver and the CA
# certificates it trusts (a proxy's), so that crates.io is reached from the root as from here.
host_network() {
  cp -L /etc/resolv.conf "$1/etc/resolv.conf"
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    mkdir -p "$1/usr/local/share/ca-certificates"
    cp -- /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/"
    chroot "$1" /bin/sh -c 'update-ca-certificates >/dev/null 2>&1'
  fi
}
