#!/usr/bin/env bash
# The linker packaging/build.sh names for the bash builtin, one path for every glibc floor: it
# runs cargo-zigbuild's own linker for the floor being built, the `zig cc` wrapper that
# cargo-zigbuild sets CC_x86_64_unknown_linux_gnu to (and would have set as the linker, had
# build.sh not set one). Cargo fingerprints every crate it compiles for a target with that
# target's linker, and cargo-zigbuild's wrapper has the floor in its name: named directly, it
# made every dependency look changed at the next floor, and the three floors compiled them three
# times in one target directory. FRUN_GLIBC_FLOOR is the floor build.sh is building.
set -euo pipefail
cc=${CC_x86_64_unknown_linux_gnu:-}
floor=${FRUN_GLIBC_FLOOR:-}
if [[ -z $floor || ${cc##*/} != zigcc-*"$floor"* ]]; then
  echo "zig-linker.sh: CC_x86_64_unknown_linux_gnu ('$cc') is not cargo-zigbuild's zig cc" \
    "for glibc ${floor:-(FRUN_GLIBC_FLOOR unset)}" >&2
  exit 2
fi
exec "$cc" "$@"
