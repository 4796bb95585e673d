#!/usr/bin/env bash
# Puts the plain image's userland into DIR: DIR/busybox (Debian's static BusyBox, the package
# pinned in packaging/busybox.pin) and DIR/copyright (its licence terms, shipped in the image).
# The .deb is fetched once into the tool cache (FRUN_TOOLS_DIR): with `apt-get download` of the
# pinned version when apt knows it, else from the Debian archive's pool (FRUN_DEBIAN_MIRROR,
# default http://deb.debian.org/debian). It is refused unless its SHA-256 and that of the
# busybox binary inside it are the pinned ones.
#
# usage: packaging/userland.sh DIR
# Then, from the repository root with DIR=userland: buildah build ... -f Containerfile .
set -euo pipefail
shopt -s inherit_errexit

die() { printf 'userland.sh: error: %s\n' "$*" >&2; exit 1; }

if (($# != 1)) || [[ -z $1 ]]; then die "usage: userland.sh DIR"; fi
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=packaging/tools-dir.sh
source "$repo/packaging/tools-dir.sh"

# pin KEY: one value of busybox.pin (KEY=VALUE lines, # comments).
pin() {
  local value
  value=$(sed -n "s/^$1=//p" "$repo/packaging/busybox.pin")
  [[ -n $value ]] || die "busybox.pin has no $1"
  printf '%s\n' "$value"
}
package=$(pin package)
version=$(pin version)
pool_path=$(pin pool_path)
deb_sha256=$(pin deb_sha256)
binary_path=$(pin binary_path)
binary_sha256=$(pin binary_sha256)

cache=$tools/debs
deb=$cache/${pool_path##*/}
mkdir -p "$cache"
sha_ok() { [[ -f $1 ]] && [[ $(sha256sum <"$1") == "$2  -" ]]; }
tmp=
unpacked=
trap 'rm -rf "$tmp" "$unpacked"' EXIT

if ! sha_ok "$deb" "$deb_sha256"; then
  rm -f "$deb"
  tmp=$(mktemp -d "$cache/fetch.XXXXXX")
  # apt checks the file against its signed index; the pinned hash is checked below either way.
  if (cd "$tmp" && apt-get download -q "$package=$version" >/dev/null 2>&1); then
    mv "$tmp"/*.deb "$deb.part"
  else
    url=${FRUN_DEBIAN_MIRROR:-http://deb.debian.org/debian}/$pool_path
    if command -v curl >/dev/null; then
      curl -fsSL --retry 3 -o "$deb.part" "$url" || die "cannot download $url"
    else
      wget -q -O "$deb.part" "$url" || die "cannot download $url"
    fi
  fi
  sha_ok "$deb.part" "$deb_sha256" ||
    die "${deb##*/}: SHA-256 $(sha256sum <"$deb.part" | cut -d' ' -f1), pinned $deb_sha256"
  mv "$deb.part" "$deb"
fi

mkdir -p "$1"
out=$(cd "$1" && pwd -P)
unpacked=$(mktemp -d)
dpkg-deb -x "$deb" "$unpacked"
sha_ok "$unpacked/$binary_path" "$binary_sha256" ||
  die "$binary_path in ${deb##*/} does not have the pinned SHA-256 $binary_sha256"
install -m 0755 "$unpacked/$binary_path" "$out/busybox"
install -m 0644 "$unpacked/usr/share/doc/$package/copyright" "$out/copyright"
