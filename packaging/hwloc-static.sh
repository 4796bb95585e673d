#!/usr/bin/env bash
# Builds a static, dependency-free libhwloc for x86_64-unknown-linux-musl into PREFIX
# (PREFIX/lib/libhwloc.a, PREFIX/lib/pkgconfig/hwloc.pc, PREFIX/include), for the crate
# hwlocality(-sys) in frun's static musl binary. Does nothing if PREFIX already holds a
# build of the same tarball. Source: Debian's copy of the upstream hwloc release (pinned).
#
# usage: packaging/hwloc-static.sh PREFIX
#
# packaging/build.sh runs it with PREFIX=$FRUN_TOOLS_DIR/hwloc-musl, then builds with (see
# packaging/README.md):
#   PKG_CONFIG_LIBDIR_x86_64_unknown_linux_musl=PREFIX/lib/pkgconfig \
#   PKG_CONFIG_ALLOW_CROSS_x86_64_unknown_linux_musl=1 (and PKG_CONFIG_SYSROOT_DIR unset) \
#     cargo build --release --target x86_64-unknown-linux-musl
set -euo pipefail
shopt -s inherit_errexit

readonly version=2.9.0
readonly url=http://deb.debian.org/debian/pool/main/h/hwloc/hwloc_${version}.orig.tar.bz2
readonly sha256=b3fb1a43a14d8fbcd8e976de5ede2ea7ce1d768ed173adb33c7ceaaf098dc970

die() { printf 'hwloc-static.sh: %s\n' "$*" >&2; exit 1; }

(($# == 1)) || die "usage: hwloc-static.sh PREFIX"
[[ -n $1 ]] || die "PREFIX must not be empty"
mkdir -p -- "$1" || die "cannot create $1"
prefix=$(cd -- "$1" && pwd -P)
stamp=$prefix/.hwloc-static.stamp

# Everything optional is off, and pkg-config sees no host libraries, so the result only
# depends on musl and this tarball: Linux/x86 (cpuid) topology discovery, synthetic input and
# hwloc's built-in minimal XML parser/exporter. --localstatedir=/var: hwloc embeds
# LOCALSTATEDIR/run/hwloc/ (hwloc-dump-hwdata files) in the library, so it must not be PREFIX.
configure_args=(
  --prefix="$prefix" --localstatedir=/var
  --enable-static --disable-shared
  --disable-libxml2 --disable-cairo --disable-io --disable-libudev --disable-plugins
  --disable-pci --disable-opencl --disable-cuda --disable-nvml --disable-rsmi
  --disable-levelzero --disable-gl --disable-plugin-dlopen --disable-plugin-ltdl
  --disable-doxygen --disable-readme --disable-netloc --without-x
  --disable-dependency-tracking --enable-silent-rules
)
# The stamp records the tarball and the recipe; a change of either rebuilds.
stamp_line="$sha256 ${configure_args[*]} no-lm"

# Cache: same tarball already built and installed here.
if [[ -f $prefix/lib/libhwloc.a && -f $prefix/lib/pkgconfig/hwloc.pc && -f $stamp ]] \
  && [[ $(<"$stamp") == "$stamp_line" ]]; then
  exit 0
fi

if ! command -v musl-gcc >/dev/null; then
  sudo=()
  ((EUID == 0)) || sudo=(sudo)
  {
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q \
      && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends musl-tools
  } >/dev/null 2>&1 || die "musl-gcc is missing and installing musl-tools with apt-get failed"
  command -v musl-gcc >/dev/null || die "musl-gcc still missing after installing musl-tools"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hwloc-static.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
log=$work/build.log

tarball=$work/hwloc-$version.tar.bz2
curl -fsSL --retry 5 --retry-delay 2 --retry-connrefused --connect-timeout 20 -o "$tarball" "$url" \
  || die "download failed: $url"
actual=$(sha256sum -- "$tarball")
actual=${actual%% *}
[[ $actual == "$sha256" ]] || die "sha256 mismatch for $url: got $actual, want $sha256"

tar -xjf "$tarball" -C "$work" || die "cannot unpack $tarball"
src=$work/hwloc-$version

fail() {
  printf 'hwloc-static.sh: %s failed; end of the build log:\n' "$1" >&2
  tail -n 40 -- "$log" >&2 || true
  exit 1
}

(
  cd -- "$src"
  export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
  export PKG_CONFIG_PATH='' PKG_CONFIG_LIBDIR=/nonexistent
  # -ffile-prefix-map: assert() in hwloc's headers would embed the temporary build path.
  CC=musl-gcc CFLAGS="-O2 -g0 -ffile-prefix-map=$src=hwloc-$version" ./configure "${configure_args[@]}"
) >"$log" 2>&1 || fail configure
# Only the library, its headers and hwloc.pc (not the utilities, tests and docs).
subdirs='SUBDIRS=include hwloc'
make -C "$src" -j"$(nproc)" "$subdirs" >>"$log" 2>&1 || fail make
make -C "$src" "$subdirs" install >>"$log" 2>&1 || fail "make install"

[[ -f $prefix/lib/libhwloc.a && -f $prefix/lib/pkgconfig/hwloc.pc ]] \
  || die "make install did not produce $prefix/lib/libhwloc.a and $prefix/lib/pkgconfig/hwloc.pc"
# hwloc.pc asks for -lm. The static link runs the host's cc, whose own search path finds
# glibc's libm.a for it, and a math symbol still undefined at that point (Rust's f64::floor, a
# dependency's powf) would then come from glibc and fail to link against musl. musl keeps its
# math in libc.a: hwloc needs no -lm here.
sed -i -E 's/[[:space:]]-lm([[:space:]]|$)/\1/g' "$prefix/lib/pkgconfig/hwloc.pc"
grep -Eq -- '-lm([[:space:]]|$)' "$prefix/lib/pkgconfig/hwloc.pc" \
  && die "could not take -lm out of $prefix/lib/pkgconfig/hwloc.pc"
printf '%s\n' "$stamp_line" >"$stamp"
printf 'hwloc-static: %s\n' "$prefix"
