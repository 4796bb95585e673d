#!/usr/bin/env bash
# The cargo that packaging/build.sh has `cargo-auditable` run (through CARGO). cargo-auditable
# names itself as RUSTC_WORKSPACE_WRAPPER by its absolute path, and cargo hashes that path into
# the ids of the workspace's crates, so frun's symbol names, and with them the layout of the
# whole binary, depended on where the build tools were installed (a HOME of its own gave
# another binary). Named bare instead, it is found on PATH and the hash is the same everywhere.
set -euo pipefail
[[ -n ${FRUN_CARGO:-} ]] || { echo "cargo-for-auditable.sh: FRUN_CARGO is not set" >&2; exit 2; }
RUSTC_WORKSPACE_WRAPPER=${RUSTC_WORKSPACE_WRAPPER##*/}
export RUSTC_WORKSPACE_WRAPPER
exec "$FRUN_CARGO" "$@"
