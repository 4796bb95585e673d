#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the tests need (as root via apt, when
# missing), then checks formatting and lints, runs the benchmark script in its quick smoke mode,
# and runs the unit, integration, differential and property tests.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v pgrep >/dev/null || missing+=(procps)
command -v xargs >/dev/null || missing+=(findutils)
command -v cc >/dev/null || missing+=(gcc libc6-dev)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi
for component in rustfmt clippy; do
  rustup component list --installed 2>/dev/null | grep -q "^$component" \
    || rustup component add "$component"
done

cargo fmt --check
cargo clippy --all-targets --release -- -D warnings
if [[ "${FRUN_SKIP_BENCH_SMOKE:-0}" != 1 && -f benches/run.sh ]]; then
  QUICK=1 bash benches/run.sh
fi
# Last, so the test summary closes the output.
cargo test --release
