#!/usr/bin/env bash
# RUSTC_WRAPPER for packaging/build.sh: runs the rustc cargo chose with the --remap-path-prefix
# flags in FRUN_REMAP_FLAGS (separated by the byte 0x1f, as CARGO_ENCODED_RUSTFLAGS) added.
# Through a wrapper, not RUSTFLAGS, for two reasons: with --target, cargo passes no RUSTFLAGS to
# build scripts and proc macros, which then embed the build host's paths (CARGO_HOME) and make
# every crate that uses them differ between two machines; and cargo hashes RUSTFLAGS into the
# workspace crates' ids, so paths there made frun itself differ with the checkout's location.
set -euo pipefail
rustc=$1
shift
extra=()
if [[ -n ${FRUN_REMAP_FLAGS:-} ]]; then
  IFS=$'\x1f' read -r -a extra <<<"$FRUN_REMAP_FLAGS"
fi
exec "$rustc" "$@" "${extra[@]}"
