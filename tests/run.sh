#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the tests need (as root via apt, when
# missing), then checks formatting and lints, runs the benchmark script in its quick smoke mode,
# checks the distribution (flake and workflow lints, a reproducible packaging build checked
# twice, the container image), and runs the Python module's tests (python/tests/), the bash
# front end's tests (tests/bash/), the tests on a
# local Slurm cluster (tests/slurm/) and the unit, integration, differential and property tests
# (the engine's also on simulated NUMA nodes).
# It also runs README's first command in a fresh debootstrapped Debian 12 root, and builds frun
# with Debian 13's packaged Rust in another.
# FRUN_SKIP_BENCH_SMOKE=1, FRUN_SKIP_DIST=1 and FRUN_SKIP_FRESH_ROOT=1 leave those parts out (for
# quick local runs).
set -euo pipefail
cd "$(dirname "$0")/.."
# Marks each part with the time since the start, so a slow part shows in the log.
stage() { echo "==> [$((SECONDS / 60))m$((SECONDS % 60))s] $*"; }

missing=() bare=()
command -v pgrep >/dev/null || missing+=(procps)
command -v xargs >/dev/null || missing+=(findutils)
command -v cc >/dev/null || missing+=(gcc libc6-dev)
command -v python3 >/dev/null || missing+=(python3)
# The Python module's tests make a virtual environment (Debian keeps ensurepip apart).
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
# The Python module's Rust unit tests link libpython (python3-dev has its .so).
command -v python3-config >/dev/null || missing+=(python3-dev)
# GNU Parallel, the reference of the parallel differential corpus and of its own test suite
# (tests/gnu-parallel/), whose --csv functions need Perl's Text::CSV.
command -v parallel >/dev/null || missing+=(parallel)
perl -MText::CSV -e 1 2>/dev/null || missing+=(libtext-csv-perl)
# GNU Parallel's first compressor (its suite's results assume pzstd's sizes, as frun's --compress).
command -v pzstd >/dev/null || missing+=(zstd)
# System call traces: every message to stderr is one write (tests/output.rs).
command -v strace >/dev/null || missing+=(strace)
# A real terminal for the progress line tests (tests/progress.rs).
command -v tmux >/dev/null || missing+=(tmux)
# A local Slurm cluster for tests/slurm/ (slurmctld, slurmd, srun; munge is not used).
command -v slurmd >/dev/null || missing+=(slurm-wlm)
# hwloc (the feature the suite builds with; not a default one) for the glibc builds: its .pc and, for the static link flags
# hwlocality-sys asks for (pkg-config --static), libudev's too.
if ! command -v pkg-config >/dev/null; then
  missing+=(pkg-config libhwloc-dev libudev-dev)
else
  pkg-config --exists hwloc || missing+=(libhwloc-dev)
  pkg-config --exists libudev || missing+=(libudev-dev)
fi
# What the later parts would each install with apt themselves, asked for here in one apt run:
# one index update instead of five, and no two parts ever run apt at once (some run beside
# others). The fresh roots: debootstrap and its keyring. The distribution checks: nix-bin, git
# and the shell linter (ci/lint-dist.sh); binutils, file, musl-tools (packaging/check.sh and
# build.sh); buildah, podman, runc (packaging/image-test.sh). The benchmark: hyperfine, pigz,
# xz-utils.
if [[ "${FRUN_SKIP_FRESH_ROOT:-0}" != 1 ]]; then
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [[ -f /usr/share/keyrings/debian-archive-keyring.gpg ]] || missing+=(debian-archive-keyring)
fi
if [[ "${FRUN_SKIP_DIST:-0}" != 1 ]]; then
  for tool in nix-instantiate:nix-bin git:git shellcheck:shellcheck objdump:binutils file:file \
    musl-gcc:musl-tools; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
  done
  # As image-test.sh installs them: without the packages they only recommend.
  for tool in buildah podman runc; do
    command -v "$tool" >/dev/null || bare+=("$tool")
  done
fi
if [[ "${FRUN_SKIP_BENCH_SMOKE:-0}" != 1 ]]; then
  for tool in hyperfine:hyperfine pigz:pigz xz:xz-utils; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
  done
fi
if ((${#missing[@]} + ${#bare[@]})); then
  echo "installing: ${missing[*]} ${bare[*]}"
  export DEBIAN_FRONTEND=noninteractive
  sudo=()
  (($(id -u) == 0)) || sudo=(sudo) # CI runners are not root
  "${sudo[@]}" apt-get update -qq
  ((${#missing[@]} == 0)) || "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
  ((${#bare[@]} == 0)) || "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${bare[@]}"
fi
for component in rustfmt clippy; do
  rustup component list --installed 2>/dev/null | grep -q "^$component" \
    || rustup component add "$component"
done

# Parts that share nothing with the parts in the foreground (their own roots, target
# directories or virtual environments) run beside them, each into a log printed when it is
# waited for (`collect`): the foreground parts leave a core idle for minutes (downloads,
# debootstrap, podman, single-threaded configure and link steps).
bg_names=()
bg_pids=()
bg_logs=$(mktemp -d)
bg_count=0
trap 'rm -rf "$bg_logs"' EXIT
beside() {
  local name=$1
  shift
  echo "==> [$((SECONDS / 60))m$((SECONDS % 60))s] started beside the next parts: $name"
  ("$@") >"$bg_logs/$bg_count.log" 2>&1 &
  bg_names+=("$name")
  bg_pids+=("$!")
  bg_count=$((bg_count + 1))
}
# Waits for every part started beside, prints its log; exits if one failed.
collect() {
  local i status failed=0 first=$((bg_count - ${#bg_pids[@]}))
  for i in "${!bg_pids[@]}"; do
    if wait "${bg_pids[$i]}"; then status=ok; else status=FAILED failed=1; fi
    stage "${bg_names[$i]} (ran beside): $status"
    cat "$bg_logs/$((first + i)).log"
  done
  bg_names=()
  bg_pids=()
  ((failed == 0)) || { echo "a part run beside the others failed (above)"; exit 1; }
}
as_root() { if (($(id -u) == 0)); then "$@"; else sudo "$@"; fi; }
# README's first command, as written, in a fresh Debian 12 root; then README's way without the
# rustup script: Debian 13's own cargo builds frun (rust-version). Both need root (debootstrap,
# chroot); both spend most of their time fetching packages, beside the lints and the
# benchmark's smoke run.
fresh_roots() {
  set -e
  stage "README's first command in a fresh Debian 12 root"
  as_root bash tests/fresh-root.sh
  stage "frun built by Debian 13's packaged Rust in a fresh root"
  as_root bash tests/distro-rust.sh
}
if [[ "${FRUN_SKIP_FRESH_ROOT:-0}" != 1 ]]; then
  beside "the fresh Debian roots" fresh_roots
fi

stage "formatting and lints"
cargo fmt --check
# The layering rule (docs/design.md, "Layers"): no import circles, nothing imports upwards,
# no function over 120 lines.
python3 ci/layers.py
# One repository name everywhere (Cargo.toml's), no placeholder, scripts committed executable.
python3 ci/repository.py
# --workspace: frun and the Python module (python/, a member of the workspace but not a default
# one; `cargo fmt` above covers both) in one run, so the dependencies they share are checked once.
cargo clippy --workspace --all-targets --release -- -D warnings
# Both features in one run (they are independent; the run above covers the code without them).
cargo clippy --all-targets --release --features hwloc,bash -- -D warnings
# The API docs build without a warning: the engine's public items all documented (it denies
# missing_docs), and no broken or private intra-doc link in either crate.
RUSTDOCFLAGS="-D warnings" cargo doc -p frun-engine -p frun --no-deps --features hwloc
# The smoke run checks the benchmark's outputs, not its times: the fresh roots may still be
# building beside it.
if [[ "${FRUN_SKIP_BENCH_SMOKE:-0}" != 1 && -f benches/run.sh ]]; then
  stage "benchmark smoke run"
  QUICK=1 bash benches/run.sh
  QUICK=1 bash benches/vs-gnu.sh  # a few seconds: 50 jobs, 5000 values, 50000 lines
fi
collect
# The ring's claim/publish protocol under a model checker (loom: every interleaving of a few
# threads, up to a preemption bound; futexes modelled with their contract, so a lost wake-up is
# a deadlock) and the ring, ledger and slots modules' unit tests under the interpreter (miri:
# undefined behaviour, data races), on a pinned nightly. Each in a target dir of its own.
ring_models() {
  set -e
  RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p frun-engine --release --lib dispatch::ring::model
  CARGO_TARGET_DIR=target/miri cargo "+$miri_toolchain" miri test -p frun-engine --lib -- dispatch::ring:: dispatch::ledger:: dispatch::slots::
}
# The Python module (import frun): its pytest suite, in a fresh virtual environment, then its
# Rust unit tests (they link libpython), on the frun library maturin just built in target/.
python_module() {
  set -e
  bash python/tests/run.sh
  cargo test -p frun-python --release
}
# The pinned nightly is installed first, in the foreground: rustup is not run twice at once
# (the distribution checks add targets to the stable toolchain).
miri_toolchain=nightly-2026-05-20
if ! rustup component list --toolchain "$miri_toolchain" --installed 2>/dev/null | grep -q '^miri'; then
  rustup toolchain install "$miri_toolchain" --profile minimal --component miri,rust-src
fi
# The image test builds in containers mostly on one core (apt in the build stages, configure
# scripts, one crate at a time, the fat-LTO link): beside it, the bash front end's tests (the
# builtin in a frun.bash, driven from bash), the test suites' build, and the tests on a local
# Slurm cluster (sharding, --results and frun merge), which mostly wait (srun, commands that
# sleep). Beside those, in turn, two long suites that do not depend on timing: the resume
# properties (frun killed at random moments and resumed until the output is whole) and the
# 4 GiB stream in bounded memory; the last part below skips them.
# The Slurm tests' frun is the one the suites are built with (`cargo build` would build it
# anew: the tests' dev-dependencies turn on other features of shared crates).
# The engine, streams and faults suites again on 4 logical NUMA nodes (FRUN_NODES is the default
# of --nodes): every guarantee must hold across nodes. Resume's cases (signals, kill -9, given-up
# batches, preemption) run on 4 nodes too; its two random-interruption properties take two
# minutes each time and run once, beside the Slurm tests. (A 2-node pass was dropped to keep the
# whole suite, Slurm tests included, under half an hour: 4 nodes take every path 2 nodes do.)
# They run after the Slurm tests, still beside the image test.
# The suites are modules of the one test binary `tests`: a filter `records::` picks a suite
# (libtest filters match anywhere in a name, so `faults::` also picks input_faults::, skipped).
engine_suites=(records:: streams:: faults:: output:: retries:: differential:: properties::)
numa_suites() {
  stage "engine suites on 4 logical NUMA nodes"
  FRUN_NODES=@4 cargo test --release --features hwloc --test tests -- "${engine_suites[@]}" \
    resume:: --skip input_faults:: --skip resume_property
}
# GNU Parallel's half of its own suite (tests/gnu_suite.rs compares frun's with it), run here
# on this machine and read by the last part (FRUN_GNU_SUITE_JSON) instead of run there again.
gnu_suite_json=$(mktemp)
export FRUN_GNU_SUITE_JSON=$gnu_suite_json
after_build() {
  set -e
  local slurm gnu status=0
  stage "the bash builtin"
  bash tests/bash/run.sh
  stage "the test suites' build"
  cargo test --release --features hwloc --no-run
  stage "a local Slurm cluster, beside the resume properties and the memory bound"
  FRUN=target/release/frun bash tests/slurm/run.sh >"$bg_logs/slurm.log" 2>&1 &
  slurm=$!
  python3 tests/gnu-parallel/run.py --impl gnu --json "$gnu_suite_json" >/dev/null \
    2>"$bg_logs/gnu-suite.log" &
  gnu=$!
  cargo test --release --features hwloc --test tests -- resume_property || status=1
  cargo test --release --features hwloc --test memory || status=1
  wait "$slurm" || status=1
  cat "$bg_logs/slurm.log"
  wait "$gnu" || { cat "$bg_logs/gnu-suite.log"; status=1; }
  # The engine suites on NUMA nodes need the suites' build alone: here, beside the image test.
  ((status != 0)) || numa_suites || status=1
  return "$status"
}
beside "the ring under loom and miri" ring_models
beside "the Python module" python_module
if [[ "${FRUN_SKIP_DIST:-0}" != 1 ]]; then
  # The bash image's Debian base (debootstrap: downloads) while the builds run.
  beside "the bash image's Debian base" bash packaging/image-test.sh --base-only
  stage "distribution checks"
  bash ci/lint-dist.sh
  # The image test uses the artifacts check.sh built and checked (no third build).
  dist=$(mktemp -d)
  bash packaging/check.sh --out "$dist"
  beside "the bash builtin, the suites' build, a local Slurm cluster, NUMA nodes" after_build
  bash packaging/image-test.sh --dist "$dist"
  rm -rf "$dist"
else
  beside "the bash builtin, the suites' build, a local Slurm cluster, NUMA nodes" after_build
fi
collect
# Last, so the test summary closes the output (the resume properties and the memory bound ran
# above, beside the Slurm tests).
stage "unit, integration, differential and property tests"
cargo test --release --features hwloc -- --skip resume_property \
  --skip four_gib_streams_run_in_bounded_memory
rm -f "$gnu_suite_json"
